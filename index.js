// OpenCode 2 resolves a package directory listed in `plugins` as the file `<dir>/server` or `<dir>/index`, not through
// package.json (2.0.15: a package without either is dropped without a log line). This is that file; OpenCode 1 and
// npm-name installs use package.json's `exports` (`./server`) and never read it.
export { default } from "./dist/plugin/index.js";
