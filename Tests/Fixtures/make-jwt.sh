#!/usr/bin/env bash
# Makes an APNs provider token with openssl alone, following the recipe in APNS-REFERENCE §8:
# base64url header and claims, an ES256 signature by the .p8 key, converted from DER to JOSE's raw r||s.
#
#   make-jwt.sh KEY.p8 KEYID TEAMID [IAT]        # IAT defaults to now
#   make-jwt.sh KEY.p8 KEYID --claims JSON [--alg ALG]
set -euo pipefail
key=$1 kid=$2
shift 2
alg=ES256
if [[ ${1:-} == --claims ]]; then
    claims_json=$2
    shift 2
else
    claims_json=$(printf '{ "iss": "%s", "iat": %d }' "$1" "${2:-$(date +%s)}")
    shift $(($# < 2 ? $# : 2))
fi
if [[ ${1:-} == --alg ]]; then alg=$2; fi

b64url() { openssl base64 -e -A | tr -- '+/' '-_' | tr -d '='; }
header=$(printf '{ "alg": "%s", "kid": "%s" }' "$alg" "$kid" | b64url)
claims=$(printf '%s' "$claims_json" | b64url)
# The DER signature holds two INTEGERs, r and s; JOSE wants each as 32 big-endian bytes. asn1parse prints them
# as numbers: a leading 00 byte when the top bit is set, and leading zeros dropped when they are small.
integers=$(printf '%s' "$header.$claims" | openssl dgst -sha256 -sign "$key" | openssl asn1parse -inform DER | sed -n 's/.*INTEGER *://p')
raw=""
for hex in $integers; do
    if ((${#hex} > 64)); then hex=${hex:${#hex}-64}; fi
    hex=$(printf '%64s' "$hex" | tr ' ' 0)
    raw+=$hex
done
signature=$(perl -e 'print pack("H*", $ARGV[0])' "$raw" | b64url)
printf '%s.%s.%s\n' "$header" "$claims" "$signature"
