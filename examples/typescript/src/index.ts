// A Temporal-only integrator in TypeScript, following docs/integration.md: submit an event with
// update-with-start (its event ID is the update ID, so a resubmission is answered, not repeated),
// read the receipt's completion marker, then pull what the agent sent on its own to our service
// and acknowledge it by ID. Payloads go through Persyn's codec endpoint. One JSON line per step.
import { Client, Connection, WithStartWorkflowOperation, type Workflow } from '@temporalio/client';
import { RemoteCodec } from './codec';
import { ulid } from './ulid';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`set ${name}`);
  return value;
};

const address = env('TEMPORAL_ADDRESS');
const namespace = env('TEMPORAL_NAMESPACE', 'default');
const agent = env('PERSYN_AGENT', 'ada');
const taskQueue = env('PERSYN_TASK_QUEUE', 'persyn');
const service = env('PERSYN_SERVICE', 'crm');
const channel = env('PERSYN_CHANNEL', 'support');
const speaker = env('PERSYN_SPEAKER', 'grace');
const text = env('PERSYN_TEXT', 'Hello from the CRM.');
const pullSeconds = Number(env('PERSYN_PULL_SECONDS', '10'));
const codecEndpoint = process.env.PERSYN_CODEC_ENDPOINT;

// Wire models as `persyn schema export --public` describes them (only the fields we read).
interface CompletionMarker {
  outcome: string;
  text: string | null;
  reason: string | null;
}
interface Receipt {
  event_id: string;
  status: string;
  marker: CompletionMarker | null;
}
interface PulledMessage {
  message_id: string;
  service: string;
  channel: string;
  recipients: string[];
  text: string;
  created_at: string;
}
interface PullOutboxResult {
  acknowledged: number;
  messages: PulledMessage[];
}

const say = (step: string, fields: object): void => {
  console.log(JSON.stringify({ step, ...fields }));
};

async function main(): Promise<void> {
  const connection = await Connection.connect({ address });
  const client = new Client({
    connection,
    namespace,
    dataConverter: codecEndpoint
      ? { payloadCodecs: [new RemoteCodec(codecEndpoint, namespace, agent)] }
      : undefined,
  });
  const workflowId = `agent/${agent}`;
  const event = {
    event_id: ulid(),
    channel: { service, channel },
    speaker: { speaker_id: speaker },
    text,
  };

  const submit = (): Promise<Receipt> =>
    client.workflow.executeUpdateWithStart<Workflow, Receipt, [object]>('submit', {
      updateId: event.event_id, // the idempotency key: a retry is answered, never repeated
      args: [{ event }],
      startWorkflowOperation: new WithStartWorkflowOperation('AgentWorkflow', {
        workflowId,
        taskQueue,
        args: [{ handle: agent }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });

  const receipt = await submit();
  say('receipt', { event_id: receipt.event_id, status: receipt.status, marker: receipt.marker });
  const again = await submit();
  const identical = JSON.stringify(again) === JSON.stringify(receipt);
  say('resubmitted', { identical });
  if (!identical) throw new Error('the same event ID gave a different receipt');

  // Pull until something arrives (or time is up), then acknowledge what we handled.
  const agentHandle = client.workflow.getHandle(workflowId);
  const pull = (ack: string[]): Promise<PullOutboxResult> =>
    agentHandle.executeUpdate<PullOutboxResult, [object]>('pull_outbox', {
      args: [{ service, limit: 20, ack }],
    });
  const deadline = Date.now() + pullSeconds * 1000;
  let received: PulledMessage[] = [];
  for (;;) {
    received = (await pull([])).messages;
    if (received.length > 0 || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  for (const message of received) say('message', message);
  // Handle each message before acknowledging it: an unacknowledged one comes back next pull.
  const done = await pull(received.map((message) => message.message_id));
  say('acknowledged', { count: done.acknowledged, still_kept: done.messages.length });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
