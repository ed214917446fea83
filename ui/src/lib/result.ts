import type { ApiError, ErrorCode } from "./bindings";

/** The shape tauri-specta gives every command's answer. */
export type CommandResult<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError };

/** An error from the backend, with the stable code the UI branches on. */
export class BackendError extends Error {
  readonly code: ErrorCode;
  constructor(error: ApiError) {
    super(error.message);
    this.code = error.code;
  }
}

/** Unwraps a command's result, turning its error into a `BackendError`. */
export async function unwrap<T>(pending: Promise<CommandResult<T>>): Promise<T> {
  const result = await pending;
  if (result.status === "ok") return result.data;
  throw new BackendError(result.error);
}

/** A message fit to show a person, whatever was thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  return "Something went wrong; details are in the log.";
}
