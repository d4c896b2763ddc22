/** Placeholder: replaced by the e2e harness warm-up. */
export default async function setup(): Promise<void> {}
