# TLS material for the stack's secure listeners: one private CA, and one server certificate
# (127.0.0.1 and localhost) signed by it, shared by the Kafka SASL_SSL listener and MariaDB.
# Generated once per stack home by openssl; clients trust $TB_STACK_TLS_DIR/ca.pem, as a
# deployment's clients trust its CA (TB_KAFKA_SSL_CA_FILE, TB_DB_TLS_CA_FILE).
#   ca.pem ca.key            the CA (its key signs the server certificate, nothing else)
#   server.pem server.key    the server's certificate and key, PEM (MariaDB)
#   server.p12               the same as a PKCS#12 keystore (Kafka), password $TB_STACK_TLS_KEYSTORE_PASSWORD

tls_ready() { [[ -s "$TB_STACK_TLS_DIR/server.p12" && -s "$TB_STACK_TLS_DIR/ca.pem" ]]; }

tls_ensure() {
  if tls_ready; then return 0; fi
  command -v openssl >/dev/null || die "openssl is needed to generate the stack's certificates"
  local dir=$TB_STACK_TLS_DIR out; out=$(log_file tls)
  mkdir -p "$dir" "$TB_STACK_HOME/logs"
  log "generating the stack's CA and server certificate in $dir"
  # One && chain: `set -e` does nothing in a subshell whose status is tested, so a step that
  # failed would otherwise go unnoticed and leave half the files behind.
  (
    cd "$dir" && umask 077 &&
      openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj '/CN=timebucket stack CA' \
        -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' \
        -keyout ca.key -out ca.pem &&
      openssl req -newkey rsa:2048 -nodes -sha256 -subj '/CN=localhost' -keyout server.key -out server.csr &&
      printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' 'extendedKeyUsage=serverAuth' \
        'keyUsage=critical,digitalSignature,keyEncipherment' >server.ext &&
      openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
        -extfile server.ext -out server.pem &&
      openssl pkcs12 -export -in server.pem -inkey server.key -certfile ca.pem -name server \
        -passout "pass:$TB_STACK_TLS_KEYSTORE_PASSWORD" -out server.p12 &&
      rm -f server.csr server.ext ca.srl &&
      # MariaDB and the JVMs run as this user; the CA certificate is public.
      chmod 644 ca.pem
  ) >"$out" 2>&1 || { cat "$out" >&2; rm -f "$dir/server.p12"; die "certificate generation failed"; }
}
