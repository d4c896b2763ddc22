export * as Orphans from "./orphans.ts";
export * as RecordMigrations from "./record-migrations.ts";
export * as ResumeWindow from "./resume-window.ts";
export * as SessionMachine from "./session-machine.ts";
export * as SessionRecordSchema from "./session-record.ts";
export * as Effects from "./effects.ts";
export * as Running from "./running.ts";
