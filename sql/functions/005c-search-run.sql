-- brain.search: hybrid search (vector + ranked full text + trigram, fused by
-- reciprocal rank fusion and weighted; docs/ranking.md), what a query asks, and
-- the rank weight a result's fused score is multiplied by.

-- What a query asks: of a text of several sentences whose last one is a
-- question, its questions; else the whole text.
CREATE OR REPLACE FUNCTION brain._asked_text(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN count(*) > 1 AND bool_or(x.last AND right(x.s, 1) = '?')
                THEN string_agg(x.s, ' ' ORDER BY x.n) FILTER (WHERE right(x.s, 1) = '?')
                ELSE t END
    FROM (SELECT btrim(p.s) AS s, p.n, p.n = max(p.n) OVER () AS last
          FROM regexp_split_to_table(coalesce(t, ''), '(?<=[.!?])\s+|\n+') WITH ORDINALITY AS p(s, n)
          WHERE btrim(p.s) <> '') AS x
$$;
COMMENT ON FUNCTION brain._asked_text IS
    'What a query asks: the sentences ending in a question mark of a text of several sentences whose last one does; else the text. The search floor''s verdict counts the unheld words of this part only.';

-- Whether a query asks what the other side of a conversation said: "you said",
-- "did you recommend", "your suggestion", "the list we came up with". Then an
-- assistant's captured reply is what it asks for: search weighs it as a
-- person's turn (assistant_turn_weight does not apply), and a captured prompt
-- gives its place to the reply that answers it.
CREATE OR REPLACE FUNCTION brain._asks_replies(query text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(query, '') ~* ('\myou(''d| had| have)? (said|mentioned|told|recommended|suggested|created|'
                                   'gave|wrote|provided|listed|explained|described|shared|proposed|outlined|'
                                   'came up with|answered|replied)\M'
                                   '|\mdid you (say|mention|tell|recommend|suggest|create|give|write|provide|list|'
                                   'explain|describe|share|propose|outline|come up with|answer|reply)\M'
                                   '|\myour (recommendations?|suggestions?|advice|answers?|reply|replies|'
                                   'explanations?|list|proposal)\M'
                                   '|\m(we|you) (outlined|discussed|talked about|came up with|went over|planned)\M')
$$;
COMMENT ON FUNCTION brain._asks_replies IS
    'Whether a query asks what the other side of a conversation said ("you recommended", "did you suggest", "your suggestion", "what we outlined"): search then weighs an assistant''s captured turns as a person''s (assistant_turn_weight does not apply), and a captured prompt gives its place to the reply that answers it.';

CREATE OR REPLACE FUNCTION brain.search(
    query text,
    query_embedding double precision[] DEFAULT NULL,
    embedding_space text DEFAULT NULL,
    kinds text[] DEFAULT NULL,
    categories text[] DEFAULT NULL,
    project text DEFAULT NULL,
    tags text[] DEFAULT NULL,
    people text[] DEFAULT NULL,
    created_after timestamptz DEFAULT NULL,
    created_before timestamptz DEFAULT NULL,
    include_superseded boolean DEFAULT false,
    include_archived boolean DEFAULT false,
    include_dormant boolean DEFAULT false,
    as_of timestamptz DEFAULT NULL,
    max_results integer DEFAULT 10,
    now timestamptz DEFAULT NULL,
    source_system text DEFAULT NULL,
    source_ref text DEFAULT NULL,
    min_relevance double precision DEFAULT NULL,
    neighbours integer DEFAULT 0
)
RETURNS SETOF brain.search_result
LANGUAGE plpgsql
-- (max_results rows, 10 by default: a caller that joins them to the memories
-- reads each by its key, not the workspace)
ROWS 10
-- As the owner, which row-level security does not bind when it is a superuser
-- or BYPASSRLS: under it, the planner may not use a word's posting list or the
-- headline trigrams (@@ and pg_trgm's operators are not LEAKPROOF, so they
-- cannot run before the policy's condition), and every leg read the whole
-- workspace. Every leg names the caller's workspace itself (($1).workspace_id,
-- checked by brain._caller_workspace), as it did for the planner before.
SECURITY DEFINER
SET search_path = pg_catalog, public, pg_temp
SET hnsw.iterative_scan = relaxed_order
SET hnsw.ef_search = 40
SET hnsw.max_scan_tuples = 20000  -- raised below for selective filters, restored on return
-- One query, short plans: compiling it would cost more than it saves.
SET jit = off
SET pg_trgm.word_similarity_threshold = 0.5
-- Turned off for the search statement below (and back on when search returns).
SET enable_seqscan = on
AS $$
DECLARE
    ws bigint := brain._caller_workspace();
    cfg jsonb := brain._settings();  -- every setting, read once
    q text := brain.trim_space(coalesce(query, ''));
    -- what the statement runs with, its one parameter (brain.search_request)
    req brain.search_request;
    space brain.embedding_space;
    candidates integer := greatest((cfg->'search_candidates')::integer, 1);
    -- The query's words as the lexical leg weighs them (brain._lexical_terms).
    words_idf double precision[];
    words_lexemes text[];  -- the query's words some memory holds
    -- k1, b, average memory length, context weight, the query's idf sum
    bm25 double precision[];
    idf_sum double precision;
    left_out boolean;  -- a word of the query was left out for being common
    -- vector center and slope (the space's), lexical center and slope, hybrid weights (brain.relevance)
    calibration double precision[];
    floor double precision := coalesce(min_relevance, (cfg->'min_relevance')::double precision);
    fuzzy boolean;
    skills boolean;
    -- No filter but a project's.
    unfiltered boolean := kinds IS NULL AND categories IS NULL AND tags IS NULL AND people IS NULL
                        AND created_after IS NULL AND created_before IS NULL AND as_of IS NULL
                        AND source_system IS NULL AND source_ref IS NULL;
    replies_asked boolean := brain._asks_replies(q);
    vector_ids bigint[];  -- the vector leg's memories and similarities, in its order
    vector_sims double precision[];
    kept integer;  -- rows the selective filters keep, counted up to kept_most
    kept_most integer;  -- fewer kept rows are ranked exactly (brain._exact_rank_kept)
    exact_rows integer := (cfg->'exact_rank_rows')::integer;
    waiting boolean;  -- vectors of the space wait outside its index (brain._waiting_vectors)
    n_docs bigint;  -- the workspace's memories and their lexemes (brain.lexical_corpus)
    n_lexemes bigint;
BEGIN
    IF max_results IS NULL OR max_results NOT BETWEEN 1 AND 100 THEN
        PERFORM brain._raise('BR009', 'max_results lies between 1 and 100.',
            jsonb_build_object('max_results', max_results), 'The default is 10.');
    END IF;
    IF floor IS NULL OR floor < 0 OR floor > 1 THEN
        PERFORM brain._raise('BR009', 'min_relevance lies between 0 and 1.',
            jsonb_build_object('min_relevance', min_relevance), 'The default is the setting min_relevance.');
    END IF;
    IF neighbours IS NULL OR neighbours NOT BETWEEN 0 AND 10 THEN
        PERFORM brain._raise('BR009', 'neighbours lies between 0 and 10.',
            jsonb_build_object('neighbours', neighbours),
            'The turns or chunks on each side of a hit to bring along; 0 (the default) brings none.');
    END IF;
    IF q = '' AND query_embedding IS NULL THEN
        PERFORM brain._raise('BR009', 'A search needs a query text or a query embedding.', NULL,
            'To list memories without a query, use brain.list_recent.');
    END IF;
    PERFORM brain._bounded('query', query, 4000);
    req.query := q;
    req.kinds := kinds;
    req.categories := categories;
    req.project := project;
    req.tags := tags;
    req.people := people;
    req.created_after := created_after;
    req.created_before := created_before;
    req.include_superseded := include_superseded;
    req.include_archived := include_archived;
    req.as_of := as_of;
    req.clock := coalesce(search.now, pg_catalog.now());
    req.source_system := source_system;
    req.source_ref := source_ref;
    req.workspace_id := ws;
    req.max_results := max_results;
    req.neighbours := neighbours;
    req.min_relevance := floor;
    req.rrf_k := (cfg->'rrf_k')::double precision;
    req.skill_trigger_max := (cfg->'skill_trigger_max')::integer;
    req.vector_min_similarity := (cfg->'vector_min_similarity')::double precision;
    -- the tokens a short query names verbatim (brain.exact_tokens)
    req.exact := brain.exact_tokens(query);
    left_out := false;
    SELECT coalesce(sum(c.lexemes), 0), coalesce(sum(c.docs), 0) INTO n_lexemes, n_docs
    FROM brain.lexical_corpus c WHERE c.workspace_id = ws;
    IF q <> '' THEN
        -- each word with the words for the same thing (its group), as the leg weighs them
        SELECT array_agg(t.lexeme ORDER BY t.n), array_agg(t.idf ORDER BY t.n),
               nullif(string_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]))::text, ' | ' ORDER BY t.n)
                          FILTER (WHERE t.searched), '')::tsquery,
               array_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]), 'AB') ORDER BY t.n),
               array_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]), 'C') ORDER BY t.n),
               sum(t.idf), coalesce(bool_or(NOT t.searched), false)
        INTO words_lexemes, words_idf, req.tsq, req.words_ab, req.words_c, idf_sum, left_out
        FROM brain._lexical_terms(query, ws, cfg, n_docs) WITH ORDINALITY AS t(lexeme, docs, idf, searched, grp, n);
    END IF;
    bm25[1] := (cfg->'lexical_k1')::double precision;
    bm25[2] := (cfg->'lexical_b')::double precision;
    bm25[3] := greatest(n_lexemes::double precision / nullif(n_docs, 0), 1);  -- 1 in an empty workspace
    bm25[4] := (cfg->'lexical_context_weight')::double precision;
    bm25[5] := coalesce(idf_sum, 0);
    -- For the floor's verdict, the query's weight counts its words no memory holds
    -- too, each as much as its rarest word some memory holds (a word in none when
    -- none is held): a query about something never stored ("the axolotl's mating
    -- season") is not judged relevant by its common words alone ("season"), and in a
    -- young workspace a word nobody wrote yet ("use") weighs no more than the query's
    -- own rarest word. Of a query that asks after saying something ("Use the
    -- staging account for the replay. Which database should it point at?"), the
    -- words counted so are the question's (brain._asked_text): what the prompt says
    -- around its question is not what it asks for. Ranking and the relevance a
    -- result carries use the words some memory holds only.
    bm25[6] := coalesce(idf_sum, 0)
               + (SELECT count(*) FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, brain._asked_text(q)))) AS l(lexeme)
                  WHERE NOT l.lexeme = ANY (coalesce(words_lexemes, '{}'))
                    -- the words of a phrase some memory holds (brain.lexical_terms)
                    AND NOT EXISTS (SELECT FROM unnest(words_lexemes) AS p(term)
                                    WHERE strpos(p.term, ' ') > 0
                                      AND to_tsvector('english'::regconfig, p.term) @@ quote_literal(l.lexeme)::tsquery))
                 * coalesce((SELECT max(i) FROM unnest(words_idf) AS i), ln(1 + (greatest(n_docs, 1) + 0.5) / 0.5));
    calibration := ARRAY[NULL, NULL, (cfg->'relevance_lexical_center')::double precision,
                         (cfg->'relevance_lexical_slope')::double precision,
                         (cfg->'relevance_hybrid_bias')::double precision,
                         (cfg->'relevance_hybrid_vector')::double precision,
                         (cfg->'relevance_hybrid_lexical')::double precision,
                         -- the relevance of a memory holding the query's exact tokens, at least
                         (cfg->'exact_token_relevance')::double precision];
    req.words_idf := words_idf;
    IF query_embedding IS NOT NULL THEN
        space := brain._resolve_space(embedding_space);
        calibration[1] := space.relevance_center;
        calibration[2] := space.relevance_slope;
        req.embedding := brain._check_vector(query_embedding, space);
        PERFORM set_config('hnsw.ef_search',
            greatest((cfg->'hnsw_ef_search')::integer, candidates)::text, true);
        IF NOT unfiltered OR req.project IS NOT NULL THEN
            -- The plan by the filters' selectivity: the rows they keep, read up to
            -- brain._exact_rank_kept() (brain._search_kept), where ranking them exactly
            -- stops being cheaper than the walk. Fewer are ranked exactly
            -- (brain._search_vector_kept); more walk the index, with a tuple budget that
            -- lets the walk reach `candidates` of them (about candidates x space / kept tuples).
            -- A project alone (the prompt hook's search) keeps memories spread among
            -- the others at worst, and usually near what its searches ask (a
            -- repository's prompts, its memories): its walk is no longer than an even
            -- spread's, c = 1 rather than 2 in brain._exact_rank_kept's terms, a
            -- coefficient of 2.8 (a tenth of 10,000 memories ranked exactly, of
            -- 100,000 walked). A workspace of one project: the sample of
            -- brain._search_kept tells it, and the walk is taken without counting.
            kept_most := brain._exact_rank_kept(candidates, n_docs, exact_rows,
                                                CASE WHEN unfiltered THEN 2.8 ELSE 4 END);
            SELECT k.kept, k.kept_ids INTO kept, req.kept_ids
            FROM brain._search_kept(req, kept_most, n_docs, CASE WHEN unfiltered THEN 0.8 ELSE 1.25 END) AS k;
            PERFORM set_config('hnsw.max_scan_tuples', greatest(20000, ceil(2.0 * candidates
                * (SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.oid = 'brain.embedding'::regclass)
                / greatest(kept_most, 1)))::bigint::text, true);
        END IF;
    END IF;
    req.bm25 := bm25;
    req.calibration := calibration;
    -- Trigram matching serves short queries: typos, identifiers, headline fragments.
    -- When words were left out for being common, trigrams of those words would only
    -- rank the same crowd of memories, slowly: then the leg does not run. Nor for a
    -- query with no word to match (only stop words, "the and of", or no letter or
    -- digit, "???": without trigrams the index would be read whole).
    fuzzy := length(q) >= 3 AND brain.word_count(q) <= 5 AND NOT left_out
             AND to_tsvector('english'::regconfig, q) <> ''::tsvector;
    -- Skills are looked for only in workspaces that have some (most have none).
    skills := q <> '' AND EXISTS (SELECT FROM brain.memory m
                                  WHERE m.workspace_id = ws AND m.skill_trigger IS NOT NULL AND m.state = 'active');
    -- Every leg reads memories through an index (the words', the trigrams', the
    -- vectors', the keys). Under a LIMIT, a filter the planner thinks the word's
    -- memories often pass made reading the table in order until enough passed look
    -- cheaper, and when none passed, that read every memory: a kind filter and a
    -- word only other kinds hold took 625 ms at 1M memories. (An index's order
    -- looks as cheap for the same reason: the lexical leg's CTE.)
    PERFORM set_config('enable_seqscan', 'off', true);
    -- The vector leg first, a function of its shape's (005e-search-vector.sql),
    -- each a static statement whose plan PL/pgSQL keeps for the session: selective
    -- filters' few rows ranked exactly, a small workspace's every vector, or the
    -- walk of the space's index (a function of the space and its watermark). The
    -- rest is one statement whose plan brain._search_ranked keeps for the session.
    -- Never a prepared statement: those belong to the caller's session, which may
    -- replace one under the name this function would run, and this function runs
    -- as the owner (docs/security.md).
    IF space.space_id IS NULL THEN
        NULL;
    ELSIF kept < kept_most THEN
        SELECT array_agg(x.memory_id ORDER BY x.r), array_agg(x.similarity ORDER BY x.r) INTO vector_ids, vector_sims
        FROM brain._search_vector_kept(req, space.space_id, candidates) AS x;
    ELSIF n_docs <= exact_rows THEN
        SELECT array_agg(x.memory_id ORDER BY x.r), array_agg(x.similarity ORDER BY x.r) INTO vector_ids, vector_sims
        FROM brain._search_vector_all(req, space.space_id, candidates) AS x;
    ELSE
        waiting := EXISTS (SELECT FROM brain._waiting_vectors(space));
        -- the walk's function, by the space's id and watermark (integers) in schema
        -- brain, where no client creates anything; planned as a statement each call
        -- (its index) only where it is not written yet
        IF to_regproc(format('brain.%I', brain._search_vector_name(space))) IS NOT NULL THEN
            EXECUTE format('SELECT array_agg(x.memory_id ORDER BY x.r), array_agg(x.similarity ORDER BY x.r)'
                           ' FROM brain.%I($1, $2, $3) AS x', brain._search_vector_name(space))
            INTO vector_ids, vector_sims
            USING req, candidates, waiting;
        ELSE
            EXECUTE format('SELECT array_agg(x.memory_id ORDER BY x.r), array_agg(x.similarity ORDER BY x.r)'
                           ' FROM (%s) AS x', brain._search_vector_hnsw_sql(space))
            INTO vector_ids, vector_sims
            USING req, candidates, waiting;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM brain._search_ranked(
        req, vector_ids, vector_sims, space.space_id, fuzzy, skills, candidates,
        (cfg->'lexical_max_rows')::integer, (cfg->'search_max_per_thread')::integer,
        (cfg->'search_thread_decay')::double precision,
        -- a question about what the assistant said weighs its replies as a person's turns
        CASE WHEN replies_asked THEN 1 ELSE (cfg->'assistant_turn_weight')::double precision END,
        CASE WHEN space.space_id IS NULL THEN 0.5 ELSE space.related END, replies_asked);
END
$$;
COMMENT ON FUNCTION brain.search IS
    'Hybrid search: HNSW vector leg (when query_embedding is given), ranked full-text leg, trigram leg for short queries; fused by reciprocal rank fusion and weighted by decay, rating, pin, importance and overlay origin (docs/ranking.md); decay lowers a fact''s rank and never hides it (dormant facts are searched; include_dormant is accepted and has no effect). Matching skills come first, marked via_skill_trigger. Each result stands on its own verdict (its relevance with the query''s words no memory holds counted, at least min_relevance, default the setting): no unrelated tail, and no result at all when nothing is relevant (min_relevance 0 lists the nearest). A captured prompt that only asks gives its place to the reply that answers it (the prompt follows, neighbour_of the reply); a run of near-identical observed turns of one session (thread, or transcript: vectors at least the space''s near_identical similar; headline trigrams at 0.8 without a query vector) stands as its best, the others folded into it (metadata.folded of that result: their ids, search''s, not stored; a prompt beside a folded reply goes with it); an older memory, captured turn or superseded memory that a newer authored one among the results may contradict (newer_related: the current end of that chain; of a fact, a newer captured turn stating another value too) comes right after it; score is the ranking''s figure and never rises down the list (relevance is the evidence). The floor''s verdict of a query that says something before it asks counts the unknown words of its question only (brain._asked_text). Filters: kinds, categories, project (plus global), tags and people (all given), created range, states, as_of, provenance (source_system; source_ref exact, or every ref under it when it ends in /). Headlines and previews only: bodies come from brain.recall.';

CREATE OR REPLACE FUNCTION brain.rank_weight(kind text, origin text, pinned boolean, importance real,
                                             upvotes integer, downvotes integer, last_touch timestamptz,
                                             halflife_days double precision, now timestamptz)
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
-- No SET clause: the planner inlines it into search's scoring (one call per
-- candidate otherwise cost 20 us each). Built-ins and brain.decay_score only.
AS $$
    SELECT (CASE WHEN kind = 'fact' AND halflife_days IS NOT NULL
                 THEN 0.5 + 0.5 * brain.decay_score(last_touch, halflife_days, now) ELSE 1 END)
         * (1 + 0.05 * greatest(-10, least(10, upvotes - downvotes)))
         * (CASE WHEN pinned THEN 1.2 ELSE 1 END)
         * (CASE WHEN origin = 'overlay' THEN 1.2 ELSE 1 END)
         * (0.75 + 0.5 * importance)
$$;
COMMENT ON FUNCTION brain.rank_weight IS
    'The factor that multiplies a result''s fused score: fact decay (0.5 + 0.5 x decay), rating (1 + 0.05 x (up - down), clamped to +-10), pin (x1.2), overlay origin (x1.2), importance (0.75 + 0.5 x importance). docs/ranking.md.';
