export * from "./scripted-model.ts";
export * from "./test-project.ts";
export * from "./opencode-process.ts";
export * from "./opencode-http.ts";
export * from "./governance-files.ts";
export * from "./paths.ts";
export * from "./tui.ts";
