export * from "./governance-prefix.ts";
export * from "./post-compact-reminder.ts";
export * from "./compaction-context.ts";
export * from "./resume-context.ts";
export * from "./stop-directives.ts";
export * from "./delegation-messages.ts";
export * from "./task-context-block.ts";
export { fence, quoteInline, agentToken, describeTargets } from "./text-parts.ts";
export * as InjectSanitizer from "./inject-sanitizer.ts";
