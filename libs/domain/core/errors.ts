/** Every error code of the specification (and the contract), with its HTTP status. */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  BLOCKED_HOST: 400,
  INVALID_SLUG: 400,
  RESERVED_SLUG: 400,
  UNAUTHORIZED: 401,
  QUOTA_EXCEEDED: 402,
  FORBIDDEN: 403,
  LIMIT_EXCEEDED: 403,
  NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SLUG_TAKEN: 409,
  /** A thing still in use by another (a social file an unpublished post needs, decision 1300). */
  CONFLICT: 409,
  TEMPLATE_UNAVAILABLE: 410,
  PRECONDITION_FAILED: 412,
  TEMPLATE_SNAPSHOT_EMPTY: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  TEMPLATE_CLONE_FAILED: 500,
  NOT_CONFIGURED: 501,
  RENDERER_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  TIMEOUT: 504,
} as const;

/** A code of the error taxonomy. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** The one error the domain throws; routes render it as the contract's error body. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  /** Headers the answer carries (Retry-After, RateLimit-*). */
  readonly headers: Record<string, string>;
  constructor(code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
    this.headers = headers;
  }
}

/** The contract's error body. */
export function errorBody(code: ErrorCode, message: string, details?: unknown) {
  return { error: details === undefined ? { code, message } : { code, message, details } };
}

/** A 400 VALIDATION_ERROR naming the field and why. */
export function validationError(field: string, message: string): AppError {
  return new AppError("VALIDATION_ERROR", `${field}: ${message}`, [{ field, message }]);
}

/** A 404 NOT_FOUND for a thing that does not exist (or belongs to another organization). */
export function notFound(what: string): AppError {
  return new AppError("NOT_FOUND", `${what} not found`);
}
