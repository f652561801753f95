-- The draft (migration 028) becomes the one value that carries a memory from
-- every writer to the write core, as a job queue's job spec does: remember,
-- supersede, capture and trajectories build one through brain._write, and the
-- batch writers (observe_batch, ingest_documents) and an import build theirs
-- whole; brain._store_memories takes an array of them. Before, the core took
-- rows of brain.memory and three more arrays that had to stay in step with
-- them: the text as sent, the kind fields (a draft) and the vectors.
-- The draft gains what a stored row has beyond what a writer of one memory
-- says (a batch's or an import's: its normal form, extracted words, state,
-- counts, times, flags and place in its thread; NULL: the core's default),
-- the text as it was sent (read for injection signals before cleaning) and
-- its vector, checked in the space the write names.
-- (Each attribute added when missing, in this order.)
DO $$
DECLARE
    a record;
BEGIN
    FOR a IN SELECT * FROM (VALUES
        ('normalized', 'text'), ('people', 'text[]'), ('topics', 'text[]'), ('action_items', 'text[]'),
        ('state', 'text'), ('upvotes', 'integer'), ('downvotes', 'integer'), ('access_count', 'integer'),
        ('last_accessed', 'timestamptz'), ('superseded_at', 'timestamptz'), ('supersede_reason', 'text'),
        ('last_confirmed_at', 'timestamptz'), ('forget_reason', 'text'), ('dedup_pending', 'boolean'),
        ('record_version', 'integer'), ('created_at', 'timestamptz'), ('updated_at', 'timestamptz'),
        ('dormant_after', 'timestamptz'), ('forgotten_at', 'timestamptz'), ('archived_at', 'timestamptz'),
        ('flag_reasons', 'text[]'), ('flag_confirmed_at', 'timestamptz'), ('flag_confirmed_by', 'text'),
        ('source_chunk', 'integer'), ('context', 'text'), ('thread', 'text'), ('position', 'integer'),
        ('sent', 'text'), ('vector', 'public.vector')
    ) AS v(name, type)
    LOOP
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute t
                       WHERE t.attrelid = 'brain.memory_draft'::regclass AND t.attname = a.name
                         AND NOT t.attisdropped) THEN
            EXECUTE format('ALTER TYPE brain.memory_draft ADD ATTRIBUTE %I %s', a.name, a.type);
        END IF;
    END LOOP;
END
$$;

-- The core's rows and the arrays kept in step with them give way to the drafts
-- (sql/functions/004a-write-core.sql), and a fold takes the item it folds in
-- as one memory (sql/functions/004e-write-folds.sql).
DROP FUNCTION IF EXISTS brain._store_memories(brain.memory[], text[], brain.memory_draft[], public.vector[], bigint,
                                              bigint, jsonb, jsonb);
DROP FUNCTION IF EXISTS brain._fold_item(bigint, text, text, text, text, text[], jsonb, text, bigint, text, text,
                                         text, timestamptz, bigint, public.vector, bigint, real, text, jsonb);
DROP FUNCTION IF EXISTS brain._may_fold(brain.memory, text, text, text, text, boolean, brain.embedding_space);
-- The draft's one filler takes each field a caller names (brain._draft).
DROP FUNCTION IF EXISTS brain._draft(text, text, text, text, text, text);
