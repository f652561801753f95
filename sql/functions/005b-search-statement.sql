-- The statement brain.search runs: the lexical, trigram and skill legs and the
-- fusion and ranking over them (brain._search_statement; docs/ranking.md). The
-- workspace's settings, the filter every leg shares and the BM25 are in
-- 005-search.sql; the vector leg, which runs before, in 005e-search-vector.sql.

-- The lexical leg: BM25 over the memories holding a searched word (at most
-- lexical_max_rows of them, $8: when even the rarest word is in more, those
-- first found), the best `candidates` ($7), each with its rank r; none
-- without a word to look for. The memories are read in a
-- CTE, which is planned for all its rows and read only as far as the LIMIT:
-- planned under the LIMIT, a filter the planner thought the word's memories
-- often pass made reading the memories in an index's order (memory_active,
-- memory_created_at, memory_last_accessed) until enough passed look cheaper
-- than the word's posting list, and where none passed that read every memory.
DROP FUNCTION IF EXISTS brain._search_lexical_leg(integer, integer);
CREATE OR REPLACE FUNCTION brain._search_lexical_leg()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($l$
            SELECT x.memory_id, row_number() OVER (ORDER BY x.bm25 DESC, x.memory_id DESC) AS r, x.bm25
            FROM (%1$s) AS x
            ORDER BY x.bm25 DESC, x.memory_id DESC
            LIMIT $7 $l$,
            brain._search_bm25(format(
                -- (tsv || '') reads a memory's vector (from TOAST) once, not once per word
                'WITH held AS MATERIALIZED (SELECT m.memory_id, m.tsv || ''''::tsvector AS tsv, m.lexical_len'
                ' FROM brain.memory m WHERE ($1).tsq IS NOT NULL AND m.tsv @@ ($1).tsq AND %s)'
                ' SELECT h.memory_id, h.tsv, h.lexical_len FROM held h LIMIT $8',
                brain._search_filter())))
$f$;

-- The trigram leg, for short queries ($5): typos, identifiers, headline fragments.
-- A fragment or a typo of a common word ("ser", "paymnts servce") matches the
-- headlines of thousands of memories, and each is read and its similarity
-- computed again (100-900 ms at 100k): the leg ranks at most three times
-- `candidates` ($7) of them, those the trigram index gives first. In a CTE,
-- planned for all its rows and read only as far as the LIMIT (as the lexical
-- leg's): under the LIMIT, reading the table in an index's order looked cheaper.
DROP FUNCTION IF EXISTS brain._search_fuzzy_leg(integer);
CREATE OR REPLACE FUNCTION brain._search_fuzzy_leg()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($t$
            WITH near AS MATERIALIZED (
                SELECT m.memory_id, m.headline FROM brain.memory m
                WHERE $5 AND ($1).query OPERATOR(public.<%%) m.headline AND %1$s
                  -- typos and fragments matter when the words found little
                  AND (SELECT count(*) FROM lex) < 5)
            SELECT h.memory_id,
                   row_number() OVER (ORDER BY public.word_similarity(($1).query, h.headline) DESC, h.memory_id DESC) AS r
            FROM (SELECT n.memory_id, n.headline FROM near n LIMIT 3 * $7) AS h
            ORDER BY public.word_similarity(($1).query, h.headline) DESC, h.memory_id DESC
            LIMIT $7 $t$, brain._search_filter())
$f$;

-- The skills whose trigger keywords the query names (and whose projects, if
-- any, hold the search's project), pinned and important first; looked for
-- only in workspaces that have some ($6).
CREATE OR REPLACE FUNCTION brain._search_skills_leg()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($s$
            SELECT m.memory_id, m.skill_trigger->>'name' AS skill,
                   row_number() OVER (ORDER BY m.pinned DESC, m.importance DESC, m.memory_id) AS r
            FROM brain.memory m
            WHERE $6 AND m.skill_trigger IS NOT NULL AND %1$s
              AND m.state = 'active'
              AND EXISTS (SELECT FROM jsonb_array_elements_text(
                              coalesce(m.skill_trigger->'keywords', '[]')) AS kw
                          WHERE kw <> '' AND strpos(lower(($1).query), lower(kw)) > 0)
              AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
                   OR (($1).project IS NOT NULL AND m.skill_trigger->'projects' ? ($1).project))
            ORDER BY r
            LIMIT ($1).skill_trigger_max $s$, brain._search_filter())
$f$;

-- The whole statement of a search, one for every search: the legs (the vector
-- leg's rows, found before; lexical with words to look for; trigram when
-- fuzzy; skills when the workspace has some), fused by reciprocal rank,
-- scored, ranked, paged, with neighbours on request. It is the body of
-- brain._search_ranked, whose parameters it names: $1 the request
-- (brain.search_request), $2 and $3 the vector leg's memories and
-- similarities in its order, $4 the embedding space (NULL without an
-- embedding), $5 fuzzy, $6 skills, $7 the candidates a leg gives, $8 the
-- lexical leg's rows at most, $9 search_max_per_thread, $10
-- search_thread_decay, $11 the weight of an assistant's turn, $12 the
-- space's related similarity (0.5, of headline trigrams, without a space),
-- $13 whether the query asks what the assistant said (brain._asks_replies).
-- A leg that does not run is cut at the start of its plan (its parameter is
-- false), so one plan serves every kind of search.
DROP FUNCTION IF EXISTS brain._search_statement(brain.search_request, brain.embedding_space, jsonb, boolean,
                                                boolean, integer, bigint);
CREATE OR REPLACE FUNCTION brain._search_statement()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($q$
        WITH RECURSIVE vec AS (%1$s), lex AS (%2$s), fuz AS (%3$s),
        legs AS (
            SELECT v.memory_id, v.r, 'vector' AS leg, v.similarity, NULL::double precision AS bm25 FROM vec v
            UNION ALL SELECT l.memory_id, l.r, 'lexical', NULL, l.bm25 FROM lex l
            UNION ALL SELECT z.memory_id, z.r, 'fuzzy', NULL, NULL FROM fuz z
        ),
        fused AS (
            SELECT g.memory_id,
                   sum(1.0 / (($1).rrf_k + g.r)) AS rrf,
                   -- what a leg already computed is not computed again below
                   max(g.similarity) AS similarity, max(g.bm25) AS bm25,
                   min(g.r) FILTER (WHERE g.leg = 'vector')::integer AS vector_rank,
                   min(g.r) FILTER (WHERE g.leg = 'lexical')::integer AS lexical_rank,
                   min(g.r) FILTER (WHERE g.leg = 'fuzzy')::integer AS fuzzy_rank
            FROM legs g GROUP BY g.memory_id
        ),
        skills AS (%4$s),
        -- the BM25 of candidates the lexical leg did not rank (when the query has words)
        unranked AS (%7$s),
        evidence AS (
            -- every candidate's similarity and share of the query's BM25 weight
            -- (a headline close by trigrams counts as its share), whichever leg found it:
            -- the legs' own figures, else looked up for the candidate alone
            -- (computed first, so that brain.relevance is inlined: an argument holding
            -- a subquery would make it a function call per candidate)
            SELECT f.memory_id, f.vector_rank, f.lexical_rank, f.fuzzy_rank, f.rrf,
                   -- a memory holding the tokens a short query names verbatim (an IP, an
                   -- error code, an identifier) is evidence, whatever its vector says
                   CASE WHEN f.exact THEN greatest(brain.relevance(f.sim, f.lex, ($1).calibration), ($1).calibration[8])
                        ELSE brain.relevance(f.sim, f.lex, ($1).calibration) END AS relevance,
                   -- the same with the query's words no memory holds counted (($1).bm25[6]): the floor's verdict
                   CASE WHEN f.exact THEN greatest(brain.relevance(f.sim, f.lex_all, ($1).calibration), ($1).calibration[8])
                        ELSE brain.relevance(f.sim, f.lex_all, ($1).calibration) END AS verdict
            FROM (SELECT f.*,
                         CASE WHEN f.fuzzy_rank IS NOT NULL THEN greatest(f.trgm, f.share) ELSE f.share END AS lex,
                         CASE WHEN f.fuzzy_rank IS NOT NULL THEN greatest(f.trgm, f.share_all)
                              ELSE f.share_all END AS lex_all
                  FROM (SELECT f.*,
                               CASE WHEN f.vector_rank IS NOT NULL THEN f.similarity ELSE %5$s END AS sim,
                               CASE WHEN f.fuzzy_rank IS NOT NULL
                                    THEN (SELECT public.word_similarity(($1).query, m.headline) FROM brain.memory m
                                          WHERE m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id) END AS trgm,
                               coalesce(cardinality(($1).exact) > 0
                                        AND (SELECT brain.holds_tokens(m.headline || ' ' || m.body, ($1).exact)
                                             FROM brain.memory m
                                             WHERE m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id), false) AS exact
                        FROM (SELECT f.*,
                                     -- a candidate holding none of the words: 0
                                     coalesce(f.bm25, b.bm25, CASE WHEN ($1).bm25[5] > 0 THEN 0 END)
                                         / nullif(($1).bm25[5], 0) AS share,
                                     coalesce(f.bm25, b.bm25, CASE WHEN ($1).bm25[6] > 0 THEN 0 END)
                                         / nullif(($1).bm25[6], 0) AS share_all
                              FROM fused f LEFT JOIN unranked b ON b.memory_id = f.memory_id) AS f
                        OFFSET 0) AS f) AS f
        ),
        scored AS (
            SELECT f.memory_id, f.vector_rank, f.lexical_rank, f.fuzzy_rank, f.relevance, f.verdict, f.rrf,
                   f.relevance
                   * brain.rank_weight(m.kind, m.origin, m.pinned, m.importance, m.upvotes, m.downvotes,
                                       greatest(m.created_at, m.last_accessed, m.last_confirmed_at),
                                       -- records that do not decay (brain._undecaying) have no dormancy date
                                       CASE WHEN m.dormant_after IS NULL AND m.origin IN ('observed', 'artifact')
                                            THEN NULL ELSE fa.halflife_days END,
                                       coalesce(($1).as_of, ($1).clock))
                   -- what an assistant said in a conversation, below what a person said or wrote
                   * CASE WHEN m.origin IN ('observed', 'artifact')
                               AND coalesce(m.metadata->>'speaker', m.metadata->>'role') = 'assistant'
                          THEN %9$s ELSE 1 END AS score,
                   m.thread, m.position,
                   -- a part of a longer text that pybrain split (metadata chunk and chunks)
                   CASE WHEN m.metadata ? 'chunks' THEN m.source_ref END AS text_ref
            FROM evidence f
            JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id
            LEFT JOIN brain.fact fa ON fa.workspace_id = ($1).workspace_id AND fa.memory_id = f.memory_id
        ),
        ranked AS (
            SELECT sk.memory_id, sk.skill, s.vector_rank, s.lexical_rank, s.fuzzy_rank,
                   coalesce(sc.score, 0) AS score, sc.relevance, sc.verdict, 0 AS tier, sk.r AS place
            FROM skills sk
            LEFT JOIN scored sc ON sc.memory_id = sk.memory_id
            LEFT JOIN fused s ON s.memory_id = sk.memory_id
            UNION ALL
            SELECT sc.memory_id, NULL, sc.vector_rank, sc.lexical_rank, sc.fuzzy_rank, sc.score, sc.relevance,
                   sc.verdict, 1,
                   -- the parts of one text (chunks of a long turn or note: metadata chunks,
                   -- one source_ref and position) stand as one hit, their best, and the other parts go after
                   -- every text's best; a thread's hit ranks by its score x
                   -- search_thread_decay^c, c counting each better hit of its thread by
                   -- 1 / its distance in positions (turns): the next turn of the same
                   -- exchange weighs 1, a turn ten turns away 0.1 (a position unknown: 1);
                   -- past search_max_per_thread hits of one thread, the rest of that thread
                   -- goes after the other threads' hits; equal scores: the one the legs
                   -- ranked higher (reciprocal rank fusion) first
                   row_number() OVER (ORDER BY sc.part_place > 1, %6$s > 0 AND sc.thread_place > %6$s,
                                               sc.score * power(%8$s, coalesce((
                                                   SELECT sum(CASE WHEN b.pos IS NULL OR sc.position IS NULL THEN 1
                                                                   ELSE 1.0 / greatest(abs(b.pos - sc.position), 1) END)
                                                   FROM unnest(sc.better) AS b(pos)), 0)) DESC, sc.rrf DESC,
                                               sc.memory_id DESC)
            FROM (SELECT sc.*, CASE WHEN sc.thread IS NULL THEN 1 ELSE
                      row_number() OVER thread_order END AS thread_place,
                      -- the positions of the thread's better hits (their first parts)
                      CASE WHEN sc.thread IS NOT NULL THEN
                          array_agg(sc.position) FILTER (WHERE sc.part_place = 1)
                              OVER (thread_order ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) END AS better
                  FROM (SELECT sc.*, CASE WHEN sc.text_ref IS NULL THEN 1 ELSE
                            row_number() OVER (PARTITION BY sc.text_ref, sc.position
                                               ORDER BY sc.score DESC, sc.rrf DESC, sc.memory_id DESC) END AS part_place
                        FROM scored sc
                        WHERE sc.memory_id NOT IN (SELECT sk.memory_id FROM skills sk)
                          -- Each hit on its own verdict (the floor): what falls below it is
                          -- another topic's, and no hit at all answers "nothing relevant".
                          AND coalesce(sc.verdict, 0) >= ($1).min_relevance) AS sc
                  WINDOW thread_order AS (PARTITION BY sc.thread ORDER BY sc.part_place > 1, sc.score DESC,
                                                                           sc.rrf DESC, sc.memory_id DESC)) AS sc
        ),
        -- The ranking's first hits, at least 20 whatever max_results (so that the first k
        -- results never depend on it): what the next steps may reorder.
        window_ AS (
            SELECT r.*, row_number() OVER (ORDER BY r.tier, r.place) AS base FROM ranked r
            ORDER BY r.tier, r.place LIMIT greatest(($1).max_results, 20)
        ),
        -- A captured prompt that only asks (brain._only_asks) is answered by its
        -- reply (brain._turn_answer): the reply takes the prompt's place, with the
        -- prompt's evidence if it has less, and the prompt comes right after it,
        -- beside it. A question ranks below its answer. So is every captured prompt
        -- when the query asks what the assistant said (brain._asks_replies).
        answers AS MATERIALIZED (
            SELECT w.memory_id AS asked, a.answer_id
            -- the captured prompts first (OFFSET 0): their reply looked up for them only
            FROM (SELECT w.memory_id
                  FROM window_ w
                  JOIN brain.memory q ON q.workspace_id = ($1).workspace_id AND q.memory_id = w.memory_id
                  WHERE w.skill IS NULL
                    AND q.origin = 'observed' AND q.metadata->>'role' = 'user' AND q.metadata ? 'turn'
                    AND (%13$s OR brain._only_asks(regexp_replace(coalesce(nullif(q.body, ''), q.headline), '^User: ', '')))
                  OFFSET 0) AS w
            CROSS JOIN LATERAL brain._turn_answer(($1).workspace_id, w.memory_id) AS a
            WHERE a.answer_id <> w.memory_id
              AND EXISTS (SELECT FROM brain.memory m WHERE m.memory_id = a.answer_id AND %11$s)
        ),
        paired AS (
            SELECT y.*, row_number() OVER (ORDER BY y.base, y.sub, y.memory_id) AS place
            FROM (SELECT DISTINCT ON (x.memory_id) x.* FROM (
                      SELECT w.memory_id, w.skill, w.vector_rank, w.lexical_rank, w.fuzzy_rank, w.score, w.relevance,
                             w.verdict, w.tier, a.answer_id AS beside, w.base,
                             CASE WHEN a.asked IS NULL THEN 0 ELSE 1 END AS sub
                      FROM window_ w LEFT JOIN answers a ON a.asked = w.memory_id
                      UNION ALL
                      SELECT a.answer_id, NULL, o.vector_rank, o.lexical_rank, o.fuzzy_rank,
                             greatest(o.score, q.score), greatest(o.relevance, q.relevance),
                             greatest(o.verdict, q.verdict), q.tier, NULL, q.base, 0
                      FROM answers a
                      JOIN window_ q ON q.memory_id = a.asked
                      LEFT JOIN window_ o ON o.memory_id = a.answer_id) AS x
                  ORDER BY x.memory_id, x.base, x.sub) AS y
        ),
        -- A run of near-identical captured turns of one session ("Step 3: check host
        -- web-03 ...", "Step 4: ...") stands as its best: a turn whose vector is at
        -- least the space's near_identical similar to a better turn of its session
        -- (headline trigrams at 0.8 without a query vector) is folded into the first
        -- such turn, and a prompt shown beside its reply goes with the reply; the
        -- parts of one text are not (they are one hit), nor the sections of a
        -- document (origin artifact: the same steps under two headings say two things).
        fold_into AS MATERIALIZED (
            SELECT p.memory_id, p.beside, (
                SELECT b.memory_id
                FROM paired b
                JOIN brain.memory n ON n.workspace_id = ($1).workspace_id AND n.memory_id = b.memory_id
                WHERE b.place < p.place AND b.skill IS NULL AND b.beside IS NULL
                  AND n.origin = 'observed' AND n.memory_id <> m.memory_id
                  -- (the parts of one text are one hit already: its other parts come after)
                  AND NOT (m.metadata ? 'chunks' AND n.metadata ? 'chunks' AND n.source_ref = m.source_ref
                           AND n.position IS NOT DISTINCT FROM m.position)
                  AND (n.thread = m.thread
                       OR m.thread IS NULL AND n.thread IS NULL AND n.source_system = m.source_system
                          AND m.metadata ? 'turn' AND n.metadata ? 'turn' AND strpos(m.source_ref, '/') > 0
                          AND regexp_replace(n.source_ref, '[^/]*$', '') = regexp_replace(m.source_ref, '[^/]*$', ''))
                  AND %14$s
                ORDER BY b.place
                LIMIT 1) AS into_
            FROM paired p
            JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = p.memory_id
            WHERE p.skill IS NULL AND p.beside IS NULL AND m.origin = 'observed'
              AND (m.thread IS NOT NULL OR m.metadata ? 'turn')
        ),
        folded AS (
            -- each folded turn into the first turn of its run that stands (two steps at
            -- most: a turn near-identical to one that was itself folded)
            SELECT f.memory_id, coalesce(g.into_, f.into_) AS into_
            FROM fold_into f LEFT JOIN fold_into g ON g.memory_id = f.into_
            WHERE f.into_ IS NOT NULL
            UNION ALL
            SELECT p.memory_id, coalesce(g.into_, f.into_)
            FROM paired p
            JOIN fold_into f ON f.memory_id = p.beside AND f.into_ IS NOT NULL
            LEFT JOIN fold_into g ON g.memory_id = f.into_
        ),
        listed AS (
            SELECT p.*, (SELECT array_agg(f.memory_id ORDER BY f.memory_id) FROM folded f
                         WHERE f.into_ = p.memory_id) AS folds
            FROM paired p
            WHERE p.memory_id NOT IN (SELECT f.memory_id FROM folded f)
        ),
        -- the results' active authored memories, read once: what a newer one may contradict;
        -- and their captured turns (said), newer statements of an authored memory only
        authored AS MATERIALIZED (
            SELECT n.memory_id, n.kind, n.project, brain._said_at(n.origin, n.metadata, n.created_at) AS created_at,
                   n.headline, n.body, l.place, n.tsv,
                   -- what it states and the words naming what its values are of (brain._restates)
                   x.text AS statement, brain._naming_of(n.naming_words, x.text) AS naming,
                   brain._terms_of(n.fact_terms, n.headline, n.body) AS terms, v.embedding AS vec,
                   n.origin NOT IN ('explicit', 'overlay') AS said
            FROM listed l JOIN brain.memory n ON n.workspace_id = ($1).workspace_id AND n.memory_id = l.memory_id
            CROSS JOIN LATERAL (SELECT brain._statement_text(n.origin, n.headline, n.body) AS text) AS x
            -- (each one's vector read once, not once for every pair it is compared in)
            LEFT JOIN brain.embedding v ON v.workspace_id = ($1).workspace_id AND v.space_id = $4
                                       AND v.memory_id = n.memory_id
            WHERE n.state = 'active' AND (n.origin IN ('explicit', 'overlay') OR (n.origin = 'observed' AND n.metadata ? 'turn'))
        ),
        judged AS MATERIALIZED (
            SELECT l.*,
                   CASE WHEN m.state = 'superseded' THEN brain.current_version(m.memory_id) ELSE m.memory_id END AS current_id,
                   -- a newer authored memory among the results that may contradict this
                   -- one, the nearest: of an authored memory, one of the same kind and
                   -- project (of a global one, the searched project's too: a fact written
                   -- for every project that a session of this one corrected; a global
                   -- one is newer for every project's memories), as near as
                   -- the space's related similarity (headline trigrams
                   -- without a query vector, 0.5) and differing in distinguishing terms
                   -- only; of a captured turn or text (observed, artifact), one of its
                   -- project at half that similarity, differing so; of a superseded
                   -- memory, its current version
                   CASE WHEN m.state = 'superseded' THEN (
                            SELECT n.memory_id FROM authored n WHERE n.memory_id = brain.current_version(m.memory_id) AND NOT n.said)
                        WHEN m.state = 'active' THEN (
                   SELECT n.memory_id
                   -- the cheap tests first, then the similarity, then the terms, each for
                   -- the few pairs the one before leaves (OFFSET 0 keeps the order: the
                   -- planner would test the terms first, their cost unknown to it)
                   FROM (SELECT n.*
                         FROM (SELECT n.*, %10$s AS near
                               FROM (SELECT n.* FROM authored n
                                     WHERE n.memory_id <> m.memory_id AND brain._newer_in_scope(m.project, n.project)
                                       AND n.created_at > brain._said_at(m.origin, m.metadata, m.created_at)
                                       AND (n.kind = m.kind OR m.origin NOT IN ('explicit', 'overlay'))
                                       -- (a turn is a newer statement of what it restates,
                                       -- brain._restates, below: an authored memory or a turn)
                                       AND (NOT n.said OR m.origin IN ('explicit', 'overlay')
                                            OR m.origin = 'observed' AND m.metadata ? 'turn')
                                     OFFSET 0) AS n
                               OFFSET 0) AS n
                         WHERE n.near >= CASE WHEN m.origin IN ('explicit', 'overlay') AND NOT n.said
                                              THEN %12$s ELSE %12$s / 2 END
                         OFFSET 0) AS n
                   WHERE brain._terms_differ(brain._terms_of(m.fact_terms, m.headline, m.body), n.terms)
                     AND brain._restates_statement(ms.text, brain._naming_of(m.naming_words, ms.text),
                                                   n.statement, n.naming, n.tsv,
                                                   (SELECT (brain.setting('prompt_subject_words'))::integer))
                   ORDER BY n.near DESC, n.created_at DESC, n.memory_id DESC
                   LIMIT 1) END AS newer,
                   -- the change that left it stating an old value (brain.stale)
                   (SELECT s.change_id FROM brain.stale_mark s WHERE s.workspace_id = ($1).workspace_id
                      AND s.memory_id = m.memory_id AND m.state = 'active'
                    ORDER BY s.created_at DESC, s.change_id DESC LIMIT 1) AS stale_by
            FROM listed l
            JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = l.memory_id
            CROSS JOIN LATERAL (SELECT brain._statement_text(m.origin, m.headline, m.body) AS text) AS ms
            LEFT JOIN brain.embedding mv ON mv.workspace_id = ($1).workspace_id AND mv.space_id = $4
                                        AND mv.memory_id = m.memory_id
        ),
        -- what each older memory leads to: the end of its chain of newer ones among the
        -- results (20 -> 22 -> 24: 24), the current one; a memory stating an old value,
        -- the change among the results
        chained (memory_id, target, depth) AS (
            SELECT j.memory_id, coalesce(c.memory_id, j.newer), 1
            FROM judged j LEFT JOIN judged c ON c.memory_id = j.stale_by
            WHERE coalesce(c.memory_id, j.newer) IS NOT NULL
            UNION ALL
            SELECT c.memory_id, n.newer, c.depth + 1
            FROM chained c JOIN judged n ON n.memory_id = c.target
            WHERE n.newer IS NOT NULL AND n.newer <> c.memory_id AND c.depth < 8
        ),
        current_ AS (
            SELECT DISTINCT ON (c.memory_id) c.memory_id, c.target FROM chained c
            ORDER BY c.memory_id, c.depth DESC
        ),
        -- an older memory comes right after the current one it leads to (with the prompt
        -- it answers, beside it)
        ordered AS (
            SELECT j.*, cu.target AS newest,
                   row_number() OVER (ORDER BY coalesce(CASE WHEN n.place > h.place THEN n.place END, h.place),
                                               coalesce(n.place > h.place, false), h.place, j.place) AS hit
            FROM judged j
            LEFT JOIN current_ cu ON cu.memory_id = j.memory_id
            LEFT JOIN judged b ON b.memory_id = j.beside
            LEFT JOIN current_ bc ON bc.memory_id = b.memory_id
            CROSS JOIN LATERAL (SELECT coalesce(b.place, j.place) AS place,
                                       -- (skills keep their places: first, in their own order)
                                       CASE WHEN j.skill IS NOT NULL THEN NULL
                                            WHEN b.memory_id IS NULL THEN cu.target ELSE bc.target END AS newer) AS h
            LEFT JOIN judged n ON n.memory_id = h.newer
        ),
        -- the page first (max_results lookups, not one per candidate), then on
        -- request each relevant hit's neighbours in its thread, after it
        page AS (
            SELECT o.* FROM ordered o ORDER BY o.hit LIMIT ($1).max_results
        ),
        expanded AS (
            -- keep: skills and hits at least min_relevance relevant first (0), then
            -- neighbours (1), then the page's other hits (2): a neighbour takes the
            -- place of a hit below the floor, never of a relevant one
            SELECT p.memory_id, p.skill, p.vector_rank, p.lexical_rank, p.fuzzy_rank, p.score, p.relevance,
                   p.verdict, p.beside AS neighbour_of, p.hit, 0 AS dist, 0 AS pos,
                   CASE WHEN p.tier = 0 OR p.relevance >= ($1).min_relevance THEN 0 ELSE 2 END AS keep,
                   p.newest, p.current_id, p.folds
            FROM page p
            UNION ALL
            SELECT n.memory_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, p.memory_id, p.hit,
                   abs(n.position - h.position), n.position, 1, NULL, NULL, NULL
            FROM page p
            JOIN brain.memory h ON h.workspace_id = ($1).workspace_id AND h.memory_id = p.memory_id
            JOIN brain.memory n ON n.workspace_id = ($1).workspace_id AND n.thread = h.thread
                               AND n.position BETWEEN h.position - ($1).neighbours AND h.position + ($1).neighbours
                               AND n.memory_id <> h.memory_id AND n.state = 'active'
            WHERE ($1).neighbours > 0 AND h.thread IS NOT NULL AND (p.tier = 0 OR p.relevance >= ($1).min_relevance)
        ),
        chosen AS (
            SELECT x.* FROM (
                SELECT y.* FROM (
                    SELECT DISTINCT ON (e.memory_id) e.* FROM expanded e
                    ORDER BY e.memory_id, e.keep, e.hit, e.dist) AS y
                ORDER BY y.keep, y.hit, y.dist, y.memory_id
                LIMIT ($1).max_results) AS x
            ORDER BY x.hit, x.neighbour_of IS NOT NULL, x.pos, x.memory_id
        )
        SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.match_preview(m.body, ($1).query),
               -- the ranking's figure, never above the one before (the evidence is relevance)
               CASE WHEN rk.skill IS NULL AND rk.score IS NOT NULL
                    THEN min(rk.score) FILTER (WHERE rk.skill IS NULL)
                             OVER (ORDER BY rk.hit, rk.neighbour_of IS NOT NULL, rk.pos, rk.memory_id)
                    ELSE rk.score END::double precision,
               rk.vector_rank, rk.lexical_rank, rk.fuzzy_rank, v.sim,
               m.state, m.pinned, m.superseded_by,
               coalesce(rk.current_id,
                        CASE WHEN m.state = 'superseded' THEN brain.current_version(m.memory_id) ELSE m.memory_id END),
               rk.skill, m.created_at,
               CASE WHEN brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) THEN m.flag_reasons END,
               rk.relevance::real, m.source_system, m.source_ref,
               -- (the turns folded into this one: search's, not stored)
               CASE WHEN rk.folds IS NULL THEN m.metadata
                    ELSE coalesce(m.metadata, '{}') || jsonb_build_object('folded', rk.folds) END,
               m.thread, m.position, rk.neighbour_of,
               nullif(rk.newest, st.change_id), rk.verdict::real,
               CASE WHEN st.change_id IS NOT NULL THEN jsonb_build_object('on', st.changed_id, 'by', st.change_id,
                                                                         'values', to_jsonb(st.old_values)) END
        FROM chosen rk
        JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = rk.memory_id
        LEFT JOIN vec v ON v.memory_id = rk.memory_id
        LEFT JOIN LATERAL (SELECT s.* FROM brain.stale_mark s WHERE s.workspace_id = ($1).workspace_id
                             AND s.memory_id = m.memory_id AND m.state = 'active'
                           ORDER BY s.created_at DESC, s.change_id DESC LIMIT 1) AS st ON true
        ORDER BY rk.hit, rk.neighbour_of IS NOT NULL, rk.pos, rk.memory_id $q$,
        -- the vector leg's rows, ranked by brain.search (005e-search-vector.sql)
        'SELECT v.memory_id, v.r, v.similarity::real AS sim, v.similarity'
        ' FROM unnest($2, $3) WITH ORDINALITY AS v(memory_id, similarity, r)',
        brain._search_lexical_leg(), brain._search_fuzzy_leg(), brain._search_skills_leg(),
        -- the similarity of a fused candidate the vector leg did not find
        '(SELECT 1 - (e.embedding OPERATOR(public.<=>) ($1).embedding)'
        ' FROM brain.embedding e WHERE e.workspace_id = ($1).workspace_id AND e.space_id = $4'
        ' AND e.memory_id = f.memory_id)',
        '$9',
        brain._search_bm25('SELECT m.memory_id, m.tsv || ''''::tsvector AS tsv, m.lexical_len'
                         ' FROM fused f JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id'
                         ' WHERE f.lexical_rank IS NULL AND ($1).bm25[5] > 0 OFFSET 0'),
        '$10', '$11',
        'CASE WHEN $4 IS NULL THEN public.similarity(m.headline, n.headline) ELSE'
        ' 1 - (mv.embedding OPERATOR(public.<=>) n.vec) END',
        brain._search_filter(), '$12', '$13',
        -- near-identical: n's vector and m's, at least the space's near_identical similar
        'CASE WHEN $4 IS NULL THEN public.similarity(m.headline, n.headline) >= 0.8 ELSE'
        ' (SELECT 1 - (a.embedding OPERATOR(public.<=>) b.embedding)'
        ' FROM brain.embedding a, brain.embedding b'
        ' WHERE a.workspace_id = ($1).workspace_id AND a.space_id = $4 AND a.memory_id = m.memory_id'
        ' AND b.workspace_id = ($1).workspace_id AND b.space_id = $4 AND b.memory_id = n.memory_id)'
        ' >= (SELECT s.near_identical FROM brain.embedding_space s WHERE s.space_id = $4) END')
$f$;

-- brain.search's statement as a function of its own (brain._search_statement
-- is its body, written here when the functions are applied): PL/pgSQL keeps
-- the plan of a static statement for the session, per function, where no
-- client can name, replace or drop it. The generic plan, always: the
-- request's values change the legs' rows, not the plan (each leg reads its
-- index; a leg that does not run is cut by its parameter), and planning the
-- statement cost more than running it (3-8 ms a search). Every name in it is
-- schema-qualified; its search_path holds nothing a client may create in. The
-- vector leg, whose plan hangs on the space's index and the filters'
-- selectivity, runs before (brain.search), a function of its own for each shape
-- (005e-search-vector.sql).
DO $do$
BEGIN
    EXECUTE format($d$
        CREATE OR REPLACE FUNCTION brain._search_ranked(
            req brain.search_request, vector_ids bigint[], vector_sims double precision[], search_space bigint,
            run_fuzzy boolean, run_skills boolean, leg_rows integer, lexical_rows integer, thread_most integer,
            thread_decay double precision, assistant_weight double precision, related_similarity double precision,
            replies_asked boolean)
        RETURNS SETOF brain.search_result
        LANGUAGE plpgsql STABLE
        SET search_path = pg_catalog, pg_temp
        SET plan_cache_mode = force_generic_plan
        SET enable_seqscan = off
        SET jit = off
        SET pg_trgm.word_similarity_threshold = 0.5
        AS %L $d$, E'BEGIN\nRETURN QUERY ' || brain._search_statement() || E';\nEND');
END
$do$;
COMMENT ON FUNCTION brain._search_ranked IS
    'brain.search''s statement (brain._search_statement), planned once a session: the legs fused, scored, ranked, paged. Internal to search.';
