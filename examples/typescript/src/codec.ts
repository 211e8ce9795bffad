// A remote payload codec: Persyn's codec endpoint seals what we send with the agent's key and
// opens what the workers sealed. Temporal's remote codec protocol: POST {"payloads": [...]} in
// protobuf JSON (bytes in base64) to /encode and /decode (docs/integration.md).
import type { Payload, PayloadCodec } from '@temporalio/common';

type JsonPayload = { metadata?: Record<string, string>; data?: string };

function toJson(payload: Payload): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    metadata[key] = Buffer.from(value).toString('base64');
  }
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

function fromJson(payload: JsonPayload): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    metadata[key] = Buffer.from(value, 'base64');
  }
  return { metadata, data: Buffer.from(payload.data ?? '', 'base64') };
}

export class RemoteCodec implements PayloadCodec {
  /** `agent`: whose key seals what this client sends (the X-Persyn-Agent header). */
  constructor(
    private readonly endpoint: string,
    private readonly namespace: string,
    private readonly agent: string,
  ) {}

  encode(payloads: Payload[]): Promise<Payload[]> {
    return this.post('encode', payloads);
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return this.post('decode', payloads);
  }

  private async post(route: 'encode' | 'decode', payloads: Payload[]): Promise<Payload[]> {
    if (payloads.length === 0) return payloads;
    const response = await fetch(`${this.endpoint.replace(/\/$/, '')}/${route}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Namespace': this.namespace,
        'X-Persyn-Agent': this.agent,
      },
      body: JSON.stringify({ payloads: payloads.map(toJson) }),
    });
    if (!response.ok) {
      throw new Error(`codec endpoint ${route}: ${response.status} ${await response.text()}`);
    }
    const body = (await response.json()) as { payloads?: JsonPayload[] };
    return (body.payloads ?? []).map(fromJson);
  }
}
