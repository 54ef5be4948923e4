/**
 * A document given either parsed or as its JSON text (a file's content): the value, or a
 * ConfigError `<title>: not JSON: …` whose problems name it, like every other problem of the
 * document. Used by the topology and the entities file.
 */
import { ConfigError } from './errors';

export function jsonDocument(json: unknown, title: string): unknown {
  if (typeof json !== 'string') return json;
  try {
    return JSON.parse(json) as unknown;
  } catch (err) {
    const problems = [`not JSON: ${err instanceof Error ? err.message : String(err)}`];
    throw new ConfigError(`${title}: ${problems[0]}`, { problems });
  }
}
