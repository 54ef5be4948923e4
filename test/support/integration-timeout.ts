// Integration tests wait on real components with their own bounded waits; the per-test cap
// only catches a test that hangs outright.
jest.setTimeout(120_000);
