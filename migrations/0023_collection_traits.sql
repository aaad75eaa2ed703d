-- Up Migration

-- A collection's traits, kept from its tokens' fetched documents (token_metadata rows with status
-- 'ok'), and each token's rarity rank. Counted by triggers on token_metadata in the transaction
-- that writes a document, by the difference between the token's old and new attributes; the
-- ranks are recomputed per collection by the metadata worker after its traits changed.

-- The display type of an attribute that is a numeric trait, NULL for a string trait: a display
-- type of OpenSea's numeric ones (ASCII letters in any case) and a value written as a JSON number
-- of bounded size, so that its double is never out of range. The same rule as `classifyAttribute`
-- in src/metadata/traits.ts.
CREATE FUNCTION trait_display_type(display_type text, value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN value ~ '^-?(0|[1-9][0-9]{0,19})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?$' THEN
    CASE translate(display_type, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
      WHEN 'number' THEN 'DISPLAY_TYPE_STAT'
      WHEN 'boost_number' THEN 'DISPLAY_TYPE_BOOST'
      WHEN 'boost_percentage' THEN 'DISPLAY_TYPE_BOOST_PERCENTAGE'
      WHEN 'date' THEN 'DISPLAY_TYPE_DATE'
    END
  END
$$;

-- Tokens of a collection with a fetched document per string trait (name, value). Names and values
-- in byte order (COLLATE "C"): the API's order, one range of this key. A count that reached 0 is
-- left for the ranking pass to remove, and never shown.
CREATE TABLE collection_traits (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  name     text COLLATE "C" NOT NULL,
  value    text COLLATE "C" NOT NULL,
  tokens   bigint NOT NULL,
  PRIMARY KEY (chain_id, contract, name, value)
);

-- Tokens per numeric trait value (name, display type, value): a trait's least and greatest values
-- are the two ends of one range of this key.
CREATE TABLE collection_numeric_traits (
  chain_id     bigint NOT NULL,
  contract     bytea NOT NULL,
  name         text COLLATE "C" NOT NULL,
  display_type text COLLATE "C" NOT NULL,
  value        double precision NOT NULL,
  tokens       bigint NOT NULL,
  PRIMARY KEY (chain_id, contract, name, display_type, value)
);

-- Per collection: its tokens with a fetched document (what percentages and ranks are out of), and
-- whether its ranks are behind its traits: `changes` counts the writes that changed them,
-- `ranked_changes` is the count the ranks were computed at.
CREATE TABLE collection_trait_totals (
  chain_id         bigint NOT NULL,
  contract         bytea NOT NULL,
  documents        bigint NOT NULL DEFAULT 0,
  changes          bigint NOT NULL DEFAULT 0,
  changed_at       timestamptz NOT NULL DEFAULT now(),
  -- When the ranks first fell behind (the oldest change not ranked).
  dirty_since      timestamptz NOT NULL DEFAULT now(),
  ranked_changes   bigint NOT NULL DEFAULT 0,
  ranked_at        timestamptz,
  ranked_documents bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (chain_id, contract)
);
-- The collections whose ranks are behind, found without a scan.
CREATE INDEX collection_trait_totals_dirty ON collection_trait_totals (chain_id, dirty_since)
  WHERE changes > ranked_changes;
-- The latest ranking of a chain: part of the version the API's caches watch.
CREATE INDEX collection_trait_totals_by_ranking ON collection_trait_totals (chain_id, ranked_at);

-- Each token's rarity in its collection as last ranked (see docs/api.md): information content in
-- bits, and its rank (1 the rarest; equal scores share a rank).
CREATE TABLE token_rarity (
  chain_id bigint NOT NULL,
  contract bytea NOT NULL,
  token_id numeric(78, 0) NOT NULL,
  score    double precision NOT NULL,
  rank     bigint NOT NULL,
  PRIMARY KEY (chain_id, contract, token_id)
);

-- Applies the documents a statement wrote or removed to the counts. Statement-level, over the
-- statement's rows at once: each table's rows are changed in key order, the tables always in the
-- same order, so that two writers never wait for each other in a cycle. A rewrite that changed
-- nothing cancels out and touches no count.
CREATE FUNCTION token_metadata_traits_changed() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  changes text;
BEGIN
  changes := CASE TG_OP
    WHEN 'INSERT' THEN
      'SELECT chain_id, contract, token_id, 1 AS sign, attributes FROM new_rows WHERE status = ''ok'''
    WHEN 'DELETE' THEN
      'SELECT chain_id, contract, token_id, -1 AS sign, attributes FROM old_rows WHERE status = ''ok'''
    ELSE
      'SELECT chain_id, contract, token_id, 1 AS sign, attributes FROM new_rows WHERE status = ''ok''
       UNION ALL
       SELECT chain_id, contract, token_id, -1 AS sign, attributes FROM old_rows WHERE status = ''ok'''
  END;
  -- Each token's distinct attributes, signed: +1 as written, -1 as they were.
  changes := format($q$
    WITH changed AS (%s),
    attributes AS (
      SELECT DISTINCT c.chain_id, c.contract, c.token_id, c.sign, coalesce(a->>'traitType', '') AS name,
             coalesce(a->>'value', '') AS value, trait_display_type(a->>'displayType', a->>'value') AS display_type
      FROM changed c,
           jsonb_array_elements(CASE jsonb_typeof(c.attributes) WHEN 'array' THEN c.attributes ELSE '[]' END) a
      WHERE jsonb_typeof(a) = 'object')
  $q$, changes);

  EXECUTE changes || $q$
    INSERT INTO collection_traits AS t (chain_id, contract, name, value, tokens)
    SELECT chain_id, contract, name, value, sum(sign) FROM attributes WHERE display_type IS NULL
    GROUP BY chain_id, contract, name, value HAVING sum(sign) <> 0
    ORDER BY chain_id, contract, name, value
    ON CONFLICT (chain_id, contract, name, value) DO UPDATE SET tokens = t.tokens + excluded.tokens
  $q$;

  EXECUTE changes || $q$,
    numeric AS (
      SELECT DISTINCT chain_id, contract, token_id, sign, name, display_type, value::double precision AS value
      FROM attributes WHERE display_type IS NOT NULL)
    INSERT INTO collection_numeric_traits AS t (chain_id, contract, name, display_type, value, tokens)
    SELECT chain_id, contract, name, display_type, value, sum(sign) FROM numeric
    GROUP BY chain_id, contract, name, display_type, value HAVING sum(sign) <> 0
    ORDER BY chain_id, contract, name, display_type, value
    ON CONFLICT (chain_id, contract, name, display_type, value) DO UPDATE SET tokens = t.tokens + excluded.tokens
  $q$;

  -- A collection is touched when its documents or its attributes changed in number.
  EXECUTE changes || $q$,
    net AS (
      SELECT chain_id, contract FROM attributes
      GROUP BY chain_id, contract, name, value, display_type HAVING sum(sign) <> 0),
    documents AS (SELECT chain_id, contract, sum(sign) AS n FROM changed GROUP BY chain_id, contract)
    INSERT INTO collection_trait_totals AS t (chain_id, contract, documents, changes)
    SELECT d.chain_id, d.contract, d.n, 1 FROM documents d
    WHERE d.n <> 0 OR EXISTS (SELECT 1 FROM net WHERE net.chain_id = d.chain_id AND net.contract = d.contract)
    ORDER BY d.chain_id, d.contract
    ON CONFLICT (chain_id, contract) DO UPDATE SET
      documents = t.documents + excluded.documents, changes = t.changes + 1, changed_at = excluded.changed_at,
      dirty_since = CASE WHEN t.changes = t.ranked_changes THEN excluded.changed_at ELSE t.dirty_since END
  $q$;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER token_metadata_traits_inserted AFTER INSERT ON token_metadata
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION token_metadata_traits_changed();
CREATE TRIGGER token_metadata_traits_updated AFTER UPDATE ON token_metadata
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION token_metadata_traits_changed();
CREATE TRIGGER token_metadata_traits_deleted AFTER DELETE ON token_metadata
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION token_metadata_traits_changed();

-- The documents already fetched, counted in one pass; their ranks follow from the first ranking
-- pass of the metadata worker (every collection starts behind).
WITH attributes AS (
  SELECT DISTINCT m.chain_id, m.contract, m.token_id, coalesce(a->>'traitType', '') AS name,
         coalesce(a->>'value', '') AS value, trait_display_type(a->>'displayType', a->>'value') AS display_type
  FROM token_metadata m,
       jsonb_array_elements(CASE jsonb_typeof(m.attributes) WHEN 'array' THEN m.attributes ELSE '[]' END) a
  WHERE m.status = 'ok' AND jsonb_typeof(a) = 'object')
INSERT INTO collection_traits (chain_id, contract, name, value, tokens)
SELECT chain_id, contract, name, value, count(*) FROM attributes WHERE display_type IS NULL
GROUP BY chain_id, contract, name, value;

WITH attributes AS (
  SELECT DISTINCT m.chain_id, m.contract, m.token_id, coalesce(a->>'traitType', '') AS name,
         trait_display_type(a->>'displayType', a->>'value') AS display_type,
         CASE WHEN trait_display_type(a->>'displayType', a->>'value') IS NOT NULL
              THEN (a->>'value')::double precision END AS value
  FROM token_metadata m,
       jsonb_array_elements(CASE jsonb_typeof(m.attributes) WHEN 'array' THEN m.attributes ELSE '[]' END) a
  WHERE m.status = 'ok' AND jsonb_typeof(a) = 'object')
INSERT INTO collection_numeric_traits (chain_id, contract, name, display_type, value, tokens)
SELECT chain_id, contract, name, display_type, value, count(*) FROM attributes WHERE display_type IS NOT NULL
GROUP BY chain_id, contract, name, display_type, value;

INSERT INTO collection_trait_totals (chain_id, contract, documents, changes)
SELECT chain_id, contract, count(*), 1 FROM token_metadata WHERE status = 'ok' GROUP BY chain_id, contract;

-- Down Migration
DROP TRIGGER token_metadata_traits_deleted ON token_metadata;
DROP TRIGGER token_metadata_traits_updated ON token_metadata;
DROP TRIGGER token_metadata_traits_inserted ON token_metadata;
DROP FUNCTION token_metadata_traits_changed();
DROP TABLE token_rarity;
DROP TABLE collection_trait_totals;
DROP TABLE collection_numeric_traits;
DROP TABLE collection_traits;
DROP FUNCTION trait_display_type(text, text);
