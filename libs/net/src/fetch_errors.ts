/** Why a guarded fetch failed; `kind` maps to the API's error codes, `message` says it in words. */
export class GuardedFetchError extends Error {
  readonly kind:
    | "invalid_url"
    | "blocked"
    | "dns"
    | "refused"
    | "unreachable"
    | "tls"
    | "timeout"
    | "too_large"
    | "too_many_redirects"
    | "http_status"
    | "network";
  /** The underlying library's error code (ENOTFOUND, CERT_HAS_EXPIRED, …), for logs; never shown as text. */
  readonly code: string | null;
  /**
   * True when the guard refused the URL before any connection was made (a bad URL, a scheme other than
   * https, an address the guard does not reach, literal or resolved): no host was contacted, so it is
   * no failed fetch (the spec counts failed fetches against a site's daily attempts).
   */
  readonly refusedBeforeConnecting: boolean;
  constructor(
    kind: GuardedFetchError["kind"],
    message: string,
    opts: { cause?: unknown; code?: string; refusedBeforeConnecting?: boolean } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "GuardedFetchError";
    this.kind = kind;
    this.code = opts.code ?? null;
    this.refusedBeforeConnecting = opts.refusedBeforeConnecting ?? false;
  }
}

/** Where a fetch stands, for a timeout's message and for errors that mean different things per stage. */
export type FetchStage = "resolving" | "connecting" | "handshake" | "waiting" | "reading";

/** What the host was doing when the deadline passed, in words. */
export const STAGE_WORDS: Record<FetchStage, string> = {
  resolving: "while its name was being resolved",
  connecting: "while connecting",
  handshake: "during the TLS handshake",
  waiting: "while waiting for its answer",
  reading: "while sending the body",
};

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
};

// The certificate chain does not lead to a trusted authority.
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "INVALID_CA",
  "CERT_CHAIN_TOO_LONG",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
]);

/** A failed name lookup, in words: no such name, or the resolver failing for now. */
export function dnsError(host: string, err: unknown): GuardedFetchError {
  const code = codeOf(err);
  const temporary =
    code === "EAI_AGAIN" || code === "ETIMEOUT" || code === "ESERVFAIL" || code === "ECONNREFUSED";
  return new GuardedFetchError(
    "dns",
    temporary
      ? `the name ${host} could not be resolved right now (the DNS lookup failed; try again later)`
      : `the name ${host} does not resolve (no such host)`,
    { cause: err, code },
  );
}

/**
 * A failed connection, in words, never the library's text: refused, unreachable, each kind of TLS
 * failure, or a connection closed early (the stage says whether the handshake had finished).
 */
export function connectionError(
  hostPort: string,
  host: string,
  err: unknown,
  stage: FetchStage,
): GuardedFetchError {
  if (err instanceof GuardedFetchError) return err;
  const code = codeOf(err) ?? "";
  const fail = (kind: GuardedFetchError["kind"], message: string) =>
    new GuardedFetchError(kind, message, { cause: err, code: code || undefined });
  if (UNTRUSTED.has(code))
    return fail(
      "tls",
      `the server's certificate is not trusted (it is not signed by an authority this server trusts)`,
    );
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || code === "HOSTNAME_MISMATCH")
    return fail("tls", `the server's certificate is not valid for ${host} (it names other hosts)`);
  if (code === "CERT_HAS_EXPIRED") return fail("tls", "the server's certificate has expired");
  if (code === "CERT_NOT_YET_VALID") return fail("tls", "the server's certificate is not valid yet");
  if (code === "CERT_REVOKED") return fail("tls", "the server's certificate has been revoked");
  if (code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_") || code === "EPROTO")
    return fail(
      "tls",
      `the TLS handshake with ${host} failed (the server does not speak HTTPS there, or no common protocol)`,
    );
  if (code === "ECONNREFUSED")
    return fail("refused", `${hostPort} refused the connection (nothing listens there)`);
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "EADDRNOTAVAIL")
    return fail("unreachable", `${host} cannot be reached from this server (no route to it)`);
  if (code === "ECONNRESET" || code === "ERR_SOCKET_CLOSED" || code === "EPIPE")
    return fail(
      "network",
      stage === "connecting" || stage === "handshake"
        ? `${hostPort} closed the connection during the TLS handshake`
        : `${hostPort} closed the connection before the answer was complete`,
    );
  return fail("network", `the connection to ${hostPort} failed${code ? ` (${code})` : ""}`);
}
