export * as DelegationPolicy from "./delegation-policy.ts";
