export * as Clock from "./clock.ts";
export * as TimeFormat from "./time-format.ts";
