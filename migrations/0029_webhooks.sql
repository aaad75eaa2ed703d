-- Up Migration

-- Webhook subscriptions to a chain's live event stream (src/webhooks/). Each is delivered strictly
-- in cursor order: `cursor` is the stream cursor delivered through. A batch is recorded in
-- `batch_first`, `batch_last` and `batch_next` before it is first sent, so that every retry, in
-- this process or after a restart, sends the same events under the same idempotency key.
-- `failing_since` is the first failure of the current run of failures: pausing waits for both a
-- count of failures and a time spent failing, so a short outage of a busy target never pauses it.
CREATE TABLE webhooks (
  id              text PRIMARY KEY,
  chain_id        bigint NOT NULL,
  url             text NOT NULL,
  -- The HMAC key of the signatures; shown once, when the subscription is added.
  secret          text NOT NULL,
  kinds           text[] NOT NULL DEFAULT '{}',
  contracts       bytea[] NOT NULL DEFAULT '{}',
  addresses       bytea[] NOT NULL DEFAULT '{}',
  -- Confirmed mode's depth; NULL: live.
  confirmations   integer,
  cursor          bigint NOT NULL,
  batch_first     bigint,
  batch_last      bigint,
  batch_next      bigint,
  state           text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused')),
  failures        integer NOT NULL DEFAULT 0,
  failing_since   timestamptz,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text,
  paused_reason   text,
  paused_at       timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhooks_chain ON webhooks (chain_id, id);

-- Every attempt to deliver a batch, kept for `mintlens webhooks log`: pruned to seven days and to
-- the newest thousand of each subscription by the deliverer.
CREATE TABLE webhook_deliveries (
  webhook_id   text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  id           bigint GENERATED ALWAYS AS IDENTITY,
  first_cursor bigint NOT NULL,
  last_cursor  bigint NOT NULL,
  events       integer NOT NULL,
  attempt      integer NOT NULL,
  -- The HTTP status answered, NULL when none was (a timeout, a refused address, a failed connection).
  status       integer,
  error        text,
  duration_ms  integer NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (webhook_id, id)
);

CREATE INDEX webhook_deliveries_at ON webhook_deliveries (at);

-- Down Migration
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
