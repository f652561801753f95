-- Settings with documented defaults, and the decay of facts.

CREATE OR REPLACE FUNCTION brain.setting_defaults()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'fact_halflife_days', 7,          -- default half-life of a new fact
        'fact_dormant_threshold', 0.1,    -- a fact whose decay score is below this is dormant
        'episodic_decay', false,          -- observed and artifact facts (records) decay and go dormant too
        'skill_trigger_max', 5,           -- skills surfaced at the top of one search
        'rrf_k', 60,                      -- reciprocal rank fusion constant
        'search_max_per_thread', 0,       -- hits of one thread (conversation, document) before other threads' (0: no limit)
        'search_thread_decay', 0.6,       -- a thread's hit ranks by its score x this^c, c: each better hit of its thread counted 1/distance in turns (1: off)
        'assistant_turn_weight', 0.25,    -- an observed turn an assistant spoke (metadata role or speaker) ranks by its score x this
        'search_candidates', 100,         -- rows each search leg contributes before fusion (whatever max_results)
        'vector_min_similarity', 0.1,     -- the vector leg ignores memories less similar than this
        'lexical_max_term_share', 0.02,   -- the lexical leg ignores words in more of the memories than this
        'lexical_max_rows', 1000,         -- and takes the rarest words until about this many memories match
        'lexical_k1', 1.2,                -- BM25 saturation of the lexical leg
        'lexical_b', 0.75,                -- BM25 length normalisation of the lexical leg
        'lexical_context_weight', 0.5,    -- a word found only in a memory's context counts this much
        'min_relevance', 0.025,           -- search returns only results whose verdict is this relevant (0 .. 1)
        'relevance_lexical_center', 0.86, -- BM25 share at which lexical evidence alone means relevance 0.5
        'relevance_lexical_slope', 8.8,   -- steepness of that logistic (brain.relevance, docs/ranking.md)
        'relevance_hybrid_bias', 0.81,    -- with both legs: bias of the fused log-odds
        'relevance_hybrid_vector', 0.53,  -- weight of the vector log-odds
        'relevance_hybrid_lexical', 0.42, -- weight of the lexical log-odds
        'exact_token_relevance', 0.9,     -- a memory holding the tokens a short query names verbatim is at least this relevant
        'search_words', '{}'::jsonb,      -- the workspace's own words for the same thing: {"word": "the word it means"}
        'search_builtin_words', true,     -- and the built-in ones (brain.builtin_search_words)
        'hnsw_ef_search', 40,             -- HNSW candidate list per vector query
        'exact_rank_rows', 2000,          -- a filtered vector lookup whose filter keeps fewer rows ranks them exactly
        'index_defer_rows', 100,          -- observe_batch leaves the vectors of a batch this large out of the index
        'index_pending_max', 10000,       -- unless this many vectors already wait (they are ranked exactly)
        'index_rebuild_share', 0.25,      -- index_vectors rebuilds when the waiting vectors are this share of the indexed
        'chunk_max_tokens', 256,          -- observe_batch's chunks: estimated tokens of embedding input, at most (and the space's max_tokens)
        'hot_days', 7,                    -- touched this recently: tier hot
        'incident_archive_days', 90,      -- maintenance archives incidents untouched this long
        'task_stale_days', 14,            -- maintenance marks open or blocked tasks idle this long stale
        'maintain_interval_hours', 24,    -- maintain_if_due runs at most this often
        'session_ttl_minutes', 5          -- a session without a heartbeat this long has ended
    -- (two objects: a function takes at most 100 arguments)
    ) || jsonb_build_object(
        'prompt_context_tokens', 500,     -- memories a prompt hook adds: at most this many tokens (docs/hooks.md: why)
        'prompt_context_max', 5,          -- and this many lines, when search's verdict finds something relevant
        'prompt_subject_slack', 1.1,      -- a word of the question a prompt line lacks counts when its idf is over this x the rarest it holds (docs/hooks.md)
        'prompt_subject_words', 20,       -- a prompt line of this many words or fewer that lacks two such words is another topic's
        'boot_token_budget', 2000,        -- default budget of a boot payload
        'boot_blockers', 5,               -- BLOCKER rules in a boot payload, at most
        'boot_patterns', 5,               -- PATTERN rules in a boot payload, at most
        'boot_pinned', 10,                -- pinned memories shown in no other section of a boot payload, at most
        'boot_min_relevance', 0.3,        -- a PATTERN rule leads the boot as relevant to the stated task from this relevance
        'boot_tasks', 20,                 -- open and blocked tasks in a boot payload, at most
        'handoff_max_chars', 2000,        -- a handoff longer than this is cut at boot
        'embedding_max_attempts', 5,      -- a text the embedder refuses this often is parked
        'embedding_retry_seconds', 60,    -- wait before its second try; doubled after each failure
        'action_items_per_hour', 5,       -- action items one session may raise in an hour
        'boot_trajectories', 3,           -- trajectories relevant to the stated task in a boot payload, at most
        'trajectory_max_steps', 50,       -- steps of one trajectory, at most
        'pack_token_budget', 600,         -- default budget of a context pack
        'resume_gap_days', 3,             -- a boot this long after the project's last session shows its snapshot
        'request_key_hours', 24           -- a write's request key answers as the first call at least this long
    )
$$;
COMMENT ON FUNCTION brain.setting_defaults IS 'Every setting and its default value.';

-- The range of every numeric setting, the one list every reader uses:
-- set_setting refuses a value outside it (BR009), brain.setting reads a
-- stored value outside it as the default, and a function whose argument
-- defaults to a setting takes the setting's range for it
-- (brain._check_setting_argument). integer: the value must be a whole number.
CREATE OR REPLACE FUNCTION brain.setting_ranges()
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT jsonb_build_object(
        'fact_halflife_days',      jsonb_build_object('min', 0.01, 'max', 36500),
        'fact_dormant_threshold',  jsonb_build_object('min', 0.0001, 'max', 0.99),
        'skill_trigger_max',       jsonb_build_object('min', 0, 'max', 50, 'integer', true),
        'rrf_k',                   jsonb_build_object('min', 1, 'max', 10000),
        'search_max_per_thread',   jsonb_build_object('min', 0, 'max', 1000, 'integer', true),
        'search_thread_decay',     jsonb_build_object('min', 0, 'max', 1),
        'assistant_turn_weight',   jsonb_build_object('min', 0, 'max', 1),
        'search_candidates',       jsonb_build_object('min', 1, 'max', 1000, 'integer', true),
        'vector_min_similarity',   jsonb_build_object('min', -1, 'max', 1),
        'lexical_max_term_share',  jsonb_build_object('min', 0.0001, 'max', 1),
        'lexical_max_rows',        jsonb_build_object('min', 1, 'max', 1000000, 'integer', true),
        'lexical_k1',              jsonb_build_object('min', 0, 'max', 10),
        'lexical_b',               jsonb_build_object('min', 0, 'max', 1),
        'lexical_context_weight',  jsonb_build_object('min', 0, 'max', 1),
        'min_relevance',           jsonb_build_object('min', 0, 'max', 1),
        'relevance_lexical_center', jsonb_build_object('min', -10, 'max', 10),
        'relevance_lexical_slope', jsonb_build_object('min', 0.001, 'max', 1000),
        'relevance_hybrid_bias',   jsonb_build_object('min', -50, 'max', 50),
        'relevance_hybrid_vector', jsonb_build_object('min', 0, 'max', 10),
        'relevance_hybrid_lexical', jsonb_build_object('min', 0, 'max', 10),
        'exact_token_relevance',   jsonb_build_object('min', 0, 'max', 1),
        'hnsw_ef_search',          jsonb_build_object('min', 1, 'max', 1000, 'integer', true),
        'exact_rank_rows',         jsonb_build_object('min', 0, 'max', 1000000, 'integer', true),
        'index_defer_rows',        jsonb_build_object('min', 1, 'max', 1000000, 'integer', true),
        'index_pending_max',       jsonb_build_object('min', 0, 'max', 100000000, 'integer', true),
        'index_rebuild_share',     jsonb_build_object('min', 0.01, 'max', 100),
        'hot_days',                jsonb_build_object('min', 0, 'max', 3650),
        'incident_archive_days',   jsonb_build_object('min', 1, 'max', 36500),
        'task_stale_days',         jsonb_build_object('min', 1, 'max', 36500),
        'maintain_interval_hours', jsonb_build_object('min', 0, 'max', 8760),
        'session_ttl_minutes',     jsonb_build_object('min', 1, 'max', 10080),
        'boot_token_budget',       jsonb_build_object('min', 200, 'max', 100000, 'integer', true),
        'boot_blockers',           jsonb_build_object('min', 0, 'max', 50, 'integer', true),
        'boot_patterns',           jsonb_build_object('min', 0, 'max', 50, 'integer', true),
        'boot_pinned',             jsonb_build_object('min', 0, 'max', 50, 'integer', true),
        'boot_min_relevance',      jsonb_build_object('min', 0, 'max', 1),
        'boot_tasks',              jsonb_build_object('min', 0, 'max', 200, 'integer', true),
        'handoff_max_chars',       jsonb_build_object('min', 100, 'max', 100000, 'integer', true),
        'embedding_max_attempts',  jsonb_build_object('min', 1, 'max', 100, 'integer', true),
        'embedding_retry_seconds', jsonb_build_object('min', 0, 'max', 86400),
        'chunk_max_tokens',        jsonb_build_object('min', 32, 'max', 65536, 'integer', true),
        'action_items_per_hour',   jsonb_build_object('min', 0, 'max', 1000, 'integer', true)
    ) || jsonb_build_object(
        'prompt_context_tokens',   jsonb_build_object('min', 20, 'max', 4000, 'integer', true),
        'prompt_context_max',      jsonb_build_object('min', 1, 'max', 20, 'integer', true),
        'prompt_subject_slack',    jsonb_build_object('min', 1, 'max', 1000),
        'prompt_subject_words',    jsonb_build_object('min', 0, 'max', 10000, 'integer', true),
        'boot_trajectories',       jsonb_build_object('min', 0, 'max', 20, 'integer', true),
        'trajectory_max_steps',    jsonb_build_object('min', 1, 'max', 500, 'integer', true),
        'pack_token_budget',       jsonb_build_object('min', 50, 'max', 20000, 'integer', true),
        'resume_gap_days',         jsonb_build_object('min', 0, 'max', 3650),
        'request_key_hours',       jsonb_build_object('min', 1, 'max', 8760, 'integer', true)
    )
$$;
COMMENT ON FUNCTION brain.setting_ranges IS
    'The range of each numeric setting (min, max, and integer when it must be a whole number): brain.set_setting refuses values outside it, brain.setting reads a stored value outside it as the default, and the functions whose arguments default to a setting (boot_payload''s token_budget, prompt_context''s token_budget and max_results) take its range.';

-- Whether a value lies in a setting's range (true for a setting without one).
CREATE OR REPLACE FUNCTION brain._in_setting_range(name text, value jsonb)
RETURNS boolean
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT r IS NULL OR jsonb_typeof(value) IS DISTINCT FROM 'number'
           OR value::text::numeric BETWEEN (r ->> 'min')::numeric AND (r ->> 'max')::numeric
              AND NOT (coalesce((r ->> 'integer')::boolean, false) AND value::text::numeric <> trunc(value::text::numeric))
    FROM (SELECT brain.setting_ranges() -> name AS r) AS x
$$;

-- BR009 when an argument that defaults to a setting lies outside the
-- setting's range: what the setting may be, the argument may be.
CREATE OR REPLACE FUNCTION brain._check_setting_argument(setting text, argument text, value numeric, what text)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r jsonb := brain.setting_ranges() -> setting;
BEGIN
    IF value IS NULL OR NOT brain._in_setting_range(setting, to_jsonb(value)) THEN
        PERFORM brain._raise('BR009', format('%s lies between %s and %s.', what, r ->> 'min', r ->> 'max'),
            jsonb_build_object('field', argument, 'min', r -> 'min', 'max', r -> 'max'),
            format('The default is the setting %s (%s).', setting, brain.setting(setting)));
    END IF;
END
$$;

-- BR009 when a setting's value is outside its range.
CREATE OR REPLACE FUNCTION brain._check_setting_range(name text, value jsonb)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r jsonb := brain.setting_ranges() -> name;
BEGIN
    IF NOT brain._in_setting_range(name, value) THEN
        PERFORM brain._raise('BR009',
            format('Setting %s is %s %s to %s.', name,
                   CASE WHEN coalesce((r ->> 'integer')::boolean, false) THEN 'a whole number from' ELSE 'from' END,
                   r ->> 'min', r ->> 'max'),
            jsonb_build_object('setting', name, 'min', r -> 'min', 'max', r -> 'max'),
            format('The default is %s.', brain.setting_defaults() -> name));
    END IF;
END
$$;

-- Every setting of this workspace at once (brain.setting reads one): its
-- overrides over the defaults, an override outside its range read as the
-- default as brain.setting reads it. Search reads some twenty, and each read
-- of one checks the caller's workspace again.
CREATE OR REPLACE FUNCTION brain._settings()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.setting_defaults()
           || coalesce((SELECT jsonb_object_agg(s.name, s.value) FROM brain.setting s
                        WHERE s.workspace_id = brain.current_workspace()
                          AND brain._in_setting_range(s.name, s.value)), '{}')
$$;

CREATE OR REPLACE FUNCTION brain.setting(name text)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(
        (SELECT s.value FROM brain.setting s
         WHERE s.workspace_id = brain.current_workspace() AND s.name = setting.name
           -- (an override stored before its range narrowed reads as the default)
           AND brain._in_setting_range(s.name, s.value)),
        brain.setting_defaults() -> setting.name)
$$;
COMMENT ON FUNCTION brain.setting IS
    'A setting of this workspace: its override, else the default from brain.setting_defaults(). An override outside the setting''s range (brain.setting_ranges(): stored before the range narrowed) reads as the default.';

CREATE OR REPLACE FUNCTION brain.set_setting(name text, value jsonb)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT brain.setting_defaults() ? name THEN
        -- (the name is not repeated: it may be anything pasted into the wrong field)
        PERFORM brain._raise('BR009', 'Unknown setting.',
            jsonb_build_object('field', 'name', 'known', (SELECT jsonb_agg(k ORDER BY k) FROM jsonb_object_keys(brain.setting_defaults()) AS k)),
            'See brain.setting_defaults() for the settings.');
    END IF;
    IF jsonb_typeof(value) IS DISTINCT FROM jsonb_typeof(brain.setting_defaults() -> name) THEN
        PERFORM brain._raise('BR009', format('Setting %s takes a %s.', name,
                                             jsonb_typeof(brain.setting_defaults() -> name)),
            jsonb_build_object('setting', name, 'type', jsonb_typeof(value)),
            format('Give a JSON %s, e.g. brain.set_setting(%L, %L).', jsonb_typeof(brain.setting_defaults() -> name),
                   name, brain.setting_defaults() -> name));
    END IF;
    PERFORM brain._check_setting_range(name, value);
    INSERT INTO brain.setting AS s (workspace_id, name, value)
    VALUES (brain.current_workspace(), set_setting.name, set_setting.value)
    ON CONFLICT ON CONSTRAINT setting_pkey DO UPDATE SET value = excluded.value;
    IF name IN ('fact_dormant_threshold', 'episodic_decay') THEN
        PERFORM brain._refresh_dormancy(NULL);
    END IF;
    RETURN value;
END
$$;
COMMENT ON FUNCTION brain.set_setting IS 'Overrides a setting for this workspace.';

-- The override goes (deleted as the owner: clients hold no DELETE, migration 034).
CREATE OR REPLACE FUNCTION brain.reset_setting(name text)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT brain.setting_defaults() ? name THEN
        PERFORM brain._raise('BR009', 'Unknown setting.', jsonb_build_object('field', 'name'),
            'See brain.setting_defaults() for the settings.');
    END IF;
    PERFORM brain._delete_setting(name);
    IF name IN ('fact_dormant_threshold', 'episodic_decay') THEN
        PERFORM brain._refresh_dormancy(NULL);
    END IF;
    RETURN brain.setting_defaults() -> name;
END
$$;
COMMENT ON FUNCTION brain.reset_setting IS 'Takes this workspace''s override of a setting away: its default applies. Returns the default.';

-- Inlined into the queries that rank (search, boot): no SET clause, which
-- would stop the planner from inlining it; the body uses built-ins only.
CREATE OR REPLACE FUNCTION brain.decay_score(last_touch timestamptz, halflife_days double precision,
                                             now timestamptz DEFAULT now())
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT power(2, -greatest(extract(epoch FROM now - last_touch), 0) / 86400.0 / halflife_days)
$$;
COMMENT ON FUNCTION brain.decay_score IS
    'Ebbinghaus decay of a fact: 2^(-days since it was last touched / half-life). 1 when just touched.';

-- When a fact touched at last_touch falls below the dormancy threshold.
CREATE OR REPLACE FUNCTION brain._dormant_after(last_touch timestamptz, halflife_days double precision)
RETURNS timestamptz
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT last_touch + make_interval(secs => halflife_days * 86400.0
        * log(2, 1.0 / (brain.setting('fact_dormant_threshold'))::numeric)::double precision)
$$;

-- Records (observed and artifact memories: chat turns, tool output, document
-- chunks) are what happened, not beliefs that go stale: they neither decay
-- nor go dormant unless the setting episodic_decay says so.
CREATE OR REPLACE FUNCTION brain._undecaying(origin text)
RETURNS boolean
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT origin IN ('observed', 'artifact') AND NOT (brain.setting('episodic_decay'))::boolean
$$;

-- Recomputes dormant_after for one fact (or every fact when id is NULL).
CREATE OR REPLACE FUNCTION brain._refresh_dormancy(id bigint)
RETURNS void
LANGUAGE sql
SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE brain.memory m
    SET dormant_after = CASE WHEN brain._undecaying(m.origin) THEN NULL ELSE brain._dormant_after(
            greatest(m.created_at, m.last_accessed, m.last_confirmed_at), f.halflife_days) END
    FROM brain.fact f
    WHERE m.workspace_id = brain.current_workspace() AND f.workspace_id = m.workspace_id
      AND f.memory_id = m.memory_id AND (id IS NULL OR m.memory_id = id)
$$;
