-- The boot payload's PATTERN rules nearest a task, found in a graph of their
-- vectors only (issue 14). brain._boot_patterns_near walked the space's HNSW
-- index over every vector, filtering for the scope's PATTERN rules: at 1M
-- memories about 4,500 tuples a boot. A vector's pattern_rule says that its
-- memory is a boot candidate (an active, unflagged PATTERN rule without a
-- skill trigger); triggers keep it in step (sql/functions/014-boot.sql), and
-- each space gets a partial HNSW index over those vectors alone
-- (brain._pattern_index_sql), indexed vectors and waiting ones alike.
-- The backfill writes a new version of each vector of a PATTERN rule, which
-- goes into the space's whole HNSW index again: on the 1M-memory benchmark
-- database (69k such vectors) it took 184 s and the new index 17 s, with
-- brain.embedding locked (ADD COLUMN) until the migration commits.

ALTER TABLE brain.embedding ADD COLUMN pattern_rule boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN brain.embedding.pattern_rule IS
    'Its memory is an active, unflagged PATTERN rule without a skill trigger: a candidate of the boot payload''s PATTERN section, in the space''s index embedding_patterns_<space_id>. Kept by triggers on brain.memory, brain.rule and brain.embedding.';

UPDATE brain.embedding e SET pattern_rule = true
FROM brain.memory m JOIN brain.rule r ON r.workspace_id = m.workspace_id AND r.memory_id = m.memory_id
WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id
  AND m.kind = 'rule' AND m.state = 'active' AND m.skill_trigger IS NULL
  AND NOT (cardinality(m.flag_reasons) > 0 AND m.flag_confirmed_at IS NULL)
  AND r.severity = 'PATTERN';

-- The index of every existing space (brain.use_embedding_space creates those of new ones).
DO $$
DECLARE
    s record;
BEGIN
    FOR s IN SELECT es.space_id, es.dims FROM brain.embedding_space es ORDER BY es.space_id LOOP
        EXECUTE format(
            'CREATE INDEX %I ON brain.embedding USING hnsw ((embedding::public.vector(%s)) public.vector_cosine_ops)'
            ' WITH (m = 16, ef_construction = 128) WHERE space_id = %s AND pattern_rule',
            'embedding_patterns_' || s.space_id, s.dims, s.space_id);
    END LOOP;
END
$$;
