/**
 * What the operator should check when a command fails on a connection: the message of the
 * error as the client gave it, plus the settings that decide it. A wrong password or an
 * untrusted certificate otherwise reads like a network fault ("Closed connection", "self-signed
 * certificate in certificate chain") and sends people to the wrong place at 3 a.m.
 * The hint names settings, never their values.
 */

/** TLS verification failures, by the code Node's TLS stack gives them. */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const CERTIFICATE_TEXT =
  /self-signed certificate|unable to verify the first certificate|unable to get local issuer certificate|certificate has expired|does not match certificate's altnames/i;

/** The error and its causes, outermost first (kafkajs wraps the socket's error). */
function chain(err: unknown): Array<{ name?: string; message?: string; code?: string }> {
  const out: Array<{ name?: string; message?: string; code?: string }> = [];
  let e: unknown = err;
  for (let depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    out.push(e as { name?: string; message?: string; code?: string });
    e = (e as { cause?: unknown; originalError?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return out;
}

/** A one-line hint for a failure to connect, or undefined when the error is not one we know. */
export function failureHint(err: unknown): string | undefined {
  const errors = chain(err);
  const text = errors.map((e) => `${e.name ?? ''} ${e.message ?? ''}`).join(' ');
  const kafka = /KafkaJS/.test(text);
  // The registry is reached with fetch (the compatibility PUT comes first at start-up).
  const registry = /schema registry|fetch failed/i.test(text);
  if (errors.some((e) => e.name === 'KafkaJSSASLAuthenticationError') || /SASL .* authentication failed/i.test(text)) {
    return 'Kafka refused the SASL credentials: check TB_KAFKA_SASL_USERNAME, TB_KAFKA_SASL_PASSWORD (or their _FILE) and TB_KAFKA_SASL_MECHANISM';
  }
  if (errors.some((e) => e.code !== undefined && CERTIFICATE_CODES.has(e.code)) || CERTIFICATE_TEXT.test(text)) {
    if (kafka)
      return "the brokers' certificate is not trusted: set TB_KAFKA_SSL_CA_FILE to the CA that signed it (or check the broker addresses in TB_KAFKA_BROKERS match its names)";
    if (registry)
      return "the schema registry's certificate is not trusted: set NODE_EXTRA_CA_CERTS to the CA that signed it (or check the host in TB_REGISTRY_URL matches its names)";
    return "the database's certificate is not trusted: set TB_DB_TLS_CA_FILE to the CA that signed it (or check TB_DB_HOST matches its names)";
  }
  // Only a closed connection: a timeout is as likely a wrong address or a firewall.
  if (kafka && /Closed connection/i.test(text)) {
    return 'the brokers closed the connection: a listener that expects TLS or SASL closes plaintext clients; check TB_KAFKA_SSL and TB_KAFKA_SASL_MECHANISM against the listener of TB_KAFKA_BROKERS';
  }
  if (/ER_ACCESS_DENIED|Access denied for user/i.test(text) || errors.some((e) => e.code === 'ER_ACCESS_DENIED_ERROR')) {
    return 'the database refused the login: check TB_DB_USER and TB_DB_PASSWORD (or their _FILE), and TB_DB_TLS when the account requires TLS';
  }
  if (/HTTP 401|HTTP 403|status 401|status 403|Unauthorized/i.test(text)) {
    return 'the schema registry refused the request: check TB_REGISTRY_USERNAME and TB_REGISTRY_PASSWORD (or the credentials in TB_REGISTRY_URL)';
  }
  return undefined;
}
