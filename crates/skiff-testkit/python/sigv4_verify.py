"""The SigV4 signature AWS's own Python SDK (botocore) computes for a request, so that the
mock Bedrock can check skiff's signer against an independent one.

Reads one JSON object per line on stdin: method, url (as received), headers (the signed ones,
as received), body_b64, access_key, secret_key, token, region, service, amz_date; writes one
JSON object per line: the Authorization header botocore would send, and its canonical request.
"""

import base64
import json
import sys

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def main():
    for line in sys.stdin:
        r = json.loads(line)
        creds = Credentials(r["access_key"], r["secret_key"], r.get("token"))
        req = AWSRequest(
            method=r["method"],
            url=r["url"],
            data=base64.b64decode(r["body_b64"]),
            headers={name: value for name, value in r["headers"]},
        )
        req.context["timestamp"] = r["amz_date"]
        auth = SigV4Auth(creds, r["service"], r["region"])
        canonical = auth.canonical_request(req)
        string_to_sign = auth.string_to_sign(req, canonical)
        signature = auth.signature(string_to_sign, req)
        signed = auth.signed_headers(auth.headers_to_sign(req))
        scope = auth.scope(req)
        out = {
            "authorization": f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders={signed}, Signature={signature}",
            "canonical_request": canonical,
        }
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
