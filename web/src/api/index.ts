// The UI's only way to the API: the typed client, its errors in the contract's words and
// the reader of followed streams.
export { api, call, type Schemas } from "./client";
export { ApiError, asApiError, type ErrorBody, type FieldError } from "./errors";
export { ErrorAlert, notifyError } from "./ErrorAlert";
export { follow, readLines } from "./stream";
export { useProfile, type Profile } from "./profile";
