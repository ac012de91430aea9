import { ERROR_STATUS, type ErrorCode } from "./error-codes";

export interface FieldIssue {
  path: string;
  message: string;
}

/** The one HTTP error of the edge: thrown anywhere, rendered once as problem+json in `onError`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extras: { fields?: FieldIssue[]; retryAfterSeconds?: number; status?: number; oldestSeq?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(detail, options);
    this.status = extras.status ?? ERROR_STATUS[code];
  }
}

/** RFC 9457 problem document with our stable `code`. */
export function problemResponse(error: ApiError): Response {
  const body: Record<string, unknown> = {
    type: `https://vigil.dev/problems/${error.code}`,
    title: error.code.replace(/_/g, " "),
    status: error.status,
    detail: error.detail,
    code: error.code,
  };
  if (error.extras.fields) body.errors = error.extras.fields;
  if (error.extras.oldestSeq !== undefined) body.oldestSeq = error.extras.oldestSeq;
  const headers = new Headers({ "content-type": "application/problem+json" });
  if (error.extras.retryAfterSeconds !== undefined) headers.set("retry-after", String(error.extras.retryAfterSeconds));
  if (error.status === 401) headers.set("www-authenticate", 'Bearer realm="vigil"');
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** Maps a DO's failure value onto the edge error. */
export function fail(result: { code: ErrorCode; message: string; oldestSeq?: number }): never {
  throw new ApiError(result.code, result.message, result.oldestSeq === undefined ? {} : { oldestSeq: result.oldestSeq });
}
