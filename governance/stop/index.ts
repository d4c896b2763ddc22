export * as ControlRequests from "./control-requests.ts";
export * as DirectiveQueue from "./directive-queue.ts";
export * as StopLadder from "./stop-ladder.ts";
export * as SteerPolicy from "./steer-policy.ts";
export * as Notifications from "./notifications.ts";
