import assert from "node:assert/strict";
import { test } from "node:test";
import { APICallError, TripWire } from "../src/errors.js";

test("APICallError.isInstance knows its errors, also from another copy of the package", () => {
  const e = new APICallError({ message: "context length exceeded", statusCode: 400, data: { error: "too long" } });
  assert.ok(APICallError.isInstance(e));
  assert.equal(e.statusCode, 400);
  assert.equal(e.responseBody, '{"error":"too long"}');
  assert.ok(!APICallError.isInstance(new Error("context length exceeded")));
  const foreign = Object.assign(new Error("x"), { [Symbol.for("treadle.error.APICallError")]: true });
  assert.ok(APICallError.isInstance(foreign));
  assert.ok(TripWire.isInstance(new TripWire("no", { retry: true })));
});
