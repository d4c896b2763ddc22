/** The bench scripts' command line: `--name value` options and `--flag`s, read from `process.argv`. */
const args = process.argv.slice(2);

/** The value after `--name`, or undefined when the option is not given. */
export function option(name: string): string | undefined {
  return args.includes(name) ? args[args.indexOf(name) + 1] : undefined;
}

/** Whether `--name` is given. */
export function flag(name: string): boolean {
  return args.includes(name);
}
