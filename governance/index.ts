export * as SessionRecordSchema from "./session-record.ts";
