/**
 * A child's /metrics, read as the Prometheus text format: one scrape, then sample values by
 * name and labels. Only what a bench needs (gauges and counters without escaping in labels).
 */
export type Scrape = ReadonlyMap<string, number>;

/** One scrape of `http://127.0.0.1:<port>/metrics`, keyed by the sample as written (`name{labels}`). */
export async function scrapeMetrics(port: number): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`/metrics on port ${port}: HTTP ${res.status}`);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

/** The sample `name{k="v",…}` (labels in the order prom-client writes them), or null if absent. */
export function sample(scrape: Scrape, name: string, labels: Readonly<Record<string, string>> = {}): number | null {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return scrape.get(pairs.length === 0 ? name : `${name}{${pairs.join(',')}}`) ?? null;
}
