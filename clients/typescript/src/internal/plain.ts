// Generated messages <-> the plain objects the framework's processors work with.
//
// One generic walk over the message descriptors: fields keep their camelCase names, enums become
// the framework's kebab-case strings (FINISH_REASON_TOOL_CALLS -> "tool-calls"), int64 become
// numbers, google.protobuf.Value becomes plain JSON and Timestamps become Dates. The reverse walk
// accepts the same shapes, so a value read from an invocation can be sent back unchanged.
import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonValue,
  type Message,
  create,
  fromJson,
  toJson,
} from "@bufbuild/protobuf";
import { type Timestamp, type Value, TimestampSchema, ValueSchema, timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";

export type Plain = Record<string, unknown>;

const VALUE = "google.protobuf.Value";
const STRUCT = "google.protobuf.Struct";
const TIMESTAMP = "google.protobuf.Timestamp";

/** The length of the proto enum prefix (`FINISH_REASON_` for treadle.v1.FinishReason). */
function prefixLength(e: DescEnum): number {
  return e.sharedPrefix?.length ?? 0;
}

const enumNames = new Map<DescEnum, Map<number, string | undefined>>();
const enumNumbers = new Map<DescEnum, Map<string, number>>();

/** `FINISH_REASON_TOOL_CALLS` -> `tool-calls`; the unspecified value -> undefined. */
export function enumToString(e: DescEnum, n: number): string | undefined {
  let names = enumNames.get(e);
  if (!names) {
    names = new Map();
    for (const v of e.values) {
      const bare = v.name.slice(prefixLength(e));
      names.set(v.number, bare === "UNSPECIFIED" ? undefined : bare.toLowerCase().replaceAll("_", "-"));
    }
    enumNames.set(e, names);
  }
  return names.get(n);
}

/** The reverse of `enumToString`; also accepts the proto names and numbers. */
export function enumFromString(e: DescEnum, s: unknown): number {
  if (typeof s === "number") return s;
  if (s === undefined || s === null || s === "") return 0;
  let numbers = enumNumbers.get(e);
  if (!numbers) {
    numbers = new Map();
    for (const v of e.values) {
      numbers.set(v.name, v.number);
      numbers.set(v.name.slice(prefixLength(e)).toLowerCase().replaceAll("_", "-"), v.number);
    }
    enumNumbers.set(e, numbers);
  }
  const n = numbers.get(String(s));
  if (n === undefined) throw new TypeError(`${String(s)} is not a ${e.name}`);
  return n;
}

export function valueToJs(v: Value | undefined): unknown {
  return v === undefined ? undefined : toJson(ValueSchema, v);
}

export function jsToValue(js: unknown): Value | undefined {
  return js === undefined ? undefined : fromJson(ValueSchema, toJsonValue(js));
}

/** JSON-safe copy: Dates as ISO strings, undefined members dropped, bigints as numbers. */
function toJsonValue(js: unknown): JsonValue {
  if (js === null || typeof js === "string" || typeof js === "boolean") return js;
  if (typeof js === "number") return Number.isFinite(js) ? js : String(js);
  if (typeof js === "bigint") return Number(js);
  if (js instanceof Date) return js.toISOString();
  if (Array.isArray(js)) return js.map((x) => (x === undefined ? null : toJsonValue(x)));
  if (typeof js === "object") {
    const maybe = js as { toJSON?: () => unknown };
    if (typeof maybe.toJSON === "function") return toJsonValue(maybe.toJSON());
    const out: Record<string, JsonValue> = {};
    for (const [k, x] of Object.entries(js)) if (x !== undefined) out[k] = toJsonValue(x);
    return out;
  }
  return String(js);
}

/** A JSON object, for Struct fields. */
export function toJsonObject(js: unknown): { [k: string]: JsonValue } {
  const v = toJsonValue(js ?? {});
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new TypeError("expected an object");
  return v;
}

function scalarOut(v: unknown): unknown {
  return typeof v === "bigint" ? Number(v) : v;
}

function fieldOut(f: DescField, v: unknown): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalarOut(v);
    case "enum":
      return enumToString(f.enum, v as number);
    case "message":
      return messageOut(f.message, v);
    case "list":
      return (v as unknown[]).map((x) =>
        f.listKind === "enum" ? enumToString(f.enum, x as number) : f.listKind === "message" ? messageOut(f.message, x) : scalarOut(x),
      );
    case "map":
      return v;
  }
}

function messageOut(desc: DescMessage, v: unknown): unknown {
  if (v === undefined) return undefined;
  if (desc.typeName === VALUE) return valueToJs(v as Value);
  if (desc.typeName === STRUCT) return v; // already a JsonObject
  if (desc.typeName === TIMESTAMP) return timestampDate(v as Timestamp);
  return toPlain(desc, v as Message);
}

/** A generated message as a plain object (oneofs become `{case: value}` members). */
export function toPlain(desc: DescMessage, msg: Message): Plain {
  const out: Plain = {};
  const m = msg as unknown as Record<string, unknown>;
  for (const f of desc.fields) {
    if (f.oneof) continue;
    const v = fieldOut(f, m[f.localName]);
    if (v !== undefined) out[f.localName] = v;
  }
  for (const o of desc.oneofs) {
    const sel = m[o.localName] as { case?: string; value?: unknown };
    if (!sel.case) continue;
    const f = o.fields.find((x) => x.localName === sel.case)!;
    out[sel.case] = fieldOut(f, sel.value);
  }
  return out;
}

function scalarIn(f: DescField & { fieldKind: "scalar" | "list" }, v: unknown): unknown {
  const t = f.scalar;
  // 3 INT64, 4 UINT64, 16 SFIXED64, 18 SINT64, 6 FIXED64
  if (t === 3 || t === 4 || t === 6 || t === 16 || t === 18) return BigInt(Math.trunc(Number(v ?? 0)));
  return v;
}

function fieldIn(f: DescField, v: unknown): unknown {
  switch (f.fieldKind) {
    case "scalar":
      return scalarIn(f, v);
    case "enum":
      return enumFromString(f.enum, v);
    case "message":
      return messageIn(f.message, v);
    case "list":
      return (v as unknown[]).map((x) =>
        f.listKind === "enum" ? enumFromString(f.enum, x) : f.listKind === "message" ? messageIn(f.message, x) : scalarIn(f, x),
      );
    case "map":
      return v;
  }
}

function messageIn(desc: DescMessage, v: unknown): unknown {
  if (v === undefined || v === null && desc.typeName !== VALUE) return undefined;
  if (desc.typeName === VALUE) return jsToValue(v);
  if (desc.typeName === STRUCT) return toJsonObject(v);
  if (desc.typeName === TIMESTAMP) {
    if (v instanceof Date) return timestampFromMs(v.getTime());
    if (typeof v === "number") return timestampFromMs(v);
    if (typeof v === "string") return timestampFromMs(Date.parse(v));
    return create(TimestampSchema, v as Timestamp);
  }
  return fromPlain(desc, v as Plain);
}

/** The reverse of `toPlain`: unknown members are ignored. */
export function fromPlain<D extends DescMessage>(desc: D, obj: Plain): Message {
  const init: Record<string, unknown> = {};
  for (const f of desc.fields) {
    const v = obj[f.localName];
    if (v === undefined) continue;
    if (f.oneof) init[f.oneof.localName] = { case: f.localName, value: fieldIn(f, v) };
    else init[f.localName] = fieldIn(f, v);
  }
  return create(desc, init as never);
}
