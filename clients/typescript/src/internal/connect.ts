// How a client reaches a server: TLS (or plaintext, the default) and the bearer token.
//
// The token comes from `token`, or when that is undefined from `TREADLE_TOKEN`; it travels as
// `authorization: Bearer <token>` on every call and stream. `tls` takes PEM text (or a
// Uint8Array) or a file path for each of `ca` (to verify the server; default: the system's
// roots), `cert` and `key` (a client certificate, for servers that require one).
import { readFileSync } from "node:fs";
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

export const TOKEN_ENV = "TREADLE_TOKEN";
const MAX_MESSAGE_BYTES = 16 << 20;

/** PEM text, its bytes, or the path of a PEM file. */
export type Pem = string | Uint8Array;

export interface TlsOptions {
  /** The CA that signed the server's certificate (default: the system's roots). */
  ca?: Pem;
  /** A client certificate and its key, for servers that require one (mutual TLS). */
  cert?: Pem;
  key?: Pem;
  /** The name the server's certificate must carry, when not the target's host. */
  serverName?: string;
}

export interface ConnectOptions {
  /** Connect over TLS (`true`: verified against the system's roots). */
  tls?: TlsOptions | true;
  /** The bearer token (default: `TREADLE_TOKEN`; "" sends none). */
  token?: string;
}

export function baseUrl(target: string, tls = false): string {
  if (/^https?:\/\//.test(target)) return target;
  return `${tls ? "https" : "http"}://${target}`;
}

function pem(value: Pem | undefined): string | Buffer | undefined {
  if (value === undefined || typeof value !== "string") return value === undefined ? undefined : Buffer.from(value);
  return value.includes("-----BEGIN") ? value : readFileSync(value);
}

/** The transport for `target` with `o`'s TLS and token (TypeError for half a client certificate). */
export function transportFor(target: string, o: ConnectOptions = {}): Transport {
  const tls = o.tls === true ? {} : o.tls;
  if (tls && (tls.cert === undefined) !== (tls.key === undefined)) throw new TypeError("a client certificate needs both cert and key");
  const token = o.token ?? process.env[TOKEN_ENV] ?? "";
  const interceptors: Interceptor[] = token
    ? [(next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      }]
    : [];
  return createGrpcTransport({
    baseUrl: baseUrl(target, tls !== undefined),
    readMaxBytes: MAX_MESSAGE_BYTES,
    writeMaxBytes: MAX_MESSAGE_BYTES,
    interceptors,
    nodeOptions: tls ? { ca: pem(tls.ca), cert: pem(tls.cert), key: pem(tls.key), servername: tls.serverName } : undefined,
  });
}
