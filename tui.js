// OpenCode 2's TUI loads a package's `./tui` export (npm installs) or, for a package directory listed in `plugins`,
// the file `<dir>/tui` (2.0.15). This is that file; the server side is index.js.
export { default } from "./dist/plugin/tui.js";
