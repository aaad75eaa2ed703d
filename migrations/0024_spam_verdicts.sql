-- Up Migration

-- Each contract's spam verdict as the spam job last worked it out (src/spam/score.ts): the score,
-- whether it reaches the threshold, and the signals that fired with the figures they fired on
-- (`signals`: a JSON list of {"name", "weight", "evidence": {...}}). A cache of a pure function of
-- the store: the job writes it again whenever the contract's activity changes, and at least once a
-- day; a contract without a row has not been judged yet and counts as not spam.
CREATE TABLE spam_verdicts (
  chain_id    bigint NOT NULL,
  contract    bytea NOT NULL,
  score       integer NOT NULL,
  is_spam     boolean NOT NULL,
  signals     jsonb NOT NULL DEFAULT '[]',
  computed_at timestamptz NOT NULL,
  PRIMARY KEY (chain_id, contract)
);
-- The oldest verdicts first (the daily re-judging), and the newest (part of the API's data version).
CREATE INDEX spam_verdicts_by_time ON spam_verdicts (chain_id, computed_at);

-- What an operator decided about a contract: it wins over the computed verdict as soon as it is
-- written. is_spam true marks it spam, false declares it not spam; no row leaves it to the verdict.
CREATE TABLE spam_overrides (
  chain_id   bigint NOT NULL,
  contract   bytea NOT NULL,
  is_spam    boolean NOT NULL,
  note       text NOT NULL DEFAULT '',
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain_id, contract)
);

-- Contracts waiting to be judged again: their activity (transfers, sales, metadata) changed since
-- their verdict. Filled from the cursors below, emptied by the job a bounded number at a time.
CREATE TABLE spam_pending (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  PRIMARY KEY (chain_id, contract)
);

-- Per chain: the first block whose transfers have not been looked at for changed contracts, the
-- newest metadata fetch looked at, and when the overrides last changed (a deleted override leaves
-- no row whose time could say so, and the API's cached answers must move with it).
CREATE TABLE spam_state (
  chain_id       bigint PRIMARY KEY,
  next_block     bigint NOT NULL DEFAULT 0,
  metadata_since timestamptz NOT NULL DEFAULT '1970-01-01T00:00:00Z',
  overrides_at   timestamptz NOT NULL DEFAULT '1970-01-01T00:00:00Z'
);

-- Down Migration
DROP TABLE spam_state, spam_pending, spam_overrides, spam_verdicts;
