// Stand-in for the `typescript` package when measuring the bundle without the lazily
// loaded compiler (bench/harness/measure-bundle.ts passes `--alias typescript:<this file>`). Never executed.
export default {};
