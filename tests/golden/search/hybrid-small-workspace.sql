
        WITH vec AS (
        SELECT x.memory_id, x.r, x.similarity::real AS sim, x.similarity
        -- ranked over both parts of brain._nearest_sql; each part keeps its own plan
        FROM (SELECT k.memory_id, row_number() OVER (ORDER BY k.dist, k.memory_id) AS r,
                     1 - k.dist AS similarity
              FROM (
            (SELECT e.memory_id, e.dist
             FROM (SELECT e.workspace_id, e.memory_id,
                          e.embedding::public.vector(384) OPERATOR(public.<=>) ($1).embedding::public.vector(384) AS dist
                   FROM brain.embedding e
                   WHERE e.workspace_id = ($1).workspace_id AND e.space_id = 7
                   ORDER BY 3 OFFSET 0) AS e
             WHERE (SELECT 
        m.workspace_id = ($1).workspace_id
        AND (($1).kinds IS NULL OR m.kind = ANY (($1).kinds))
        AND (($1).categories IS NULL OR m.category = ANY (($1).categories))
        AND (($1).project IS NULL OR m.project IN (($1).project, ''))
        AND (($1).tags IS NULL OR m.tags @> ($1).tags)
        AND (($1).people IS NULL OR m.people @> ($1).people)
        AND (($1).created_after IS NULL OR m.created_at >= ($1).created_after)
        AND (($1).created_before IS NULL OR m.created_at < ($1).created_before)
        -- provenance: a source_ref ending in / is a folder, matching every ref under it
        AND (($1).source_system IS NULL OR m.source_system = ($1).source_system)
        AND (($1).source_ref IS NULL OR m.source_ref = ($1).source_ref
             OR right(($1).source_ref, 1) = '/' AND starts_with(m.source_ref, ($1).source_ref))
        AND CASE WHEN ($1).as_of IS NULL THEN
                (m.state = 'active' OR (($1).include_superseded AND m.state = 'superseded')
                 OR (($1).include_archived AND m.state = 'archived'))
                -- dormant facts stay: decay lowers their rank, it never hides them (search's include_dormant is kept for callers)
                AND (m.expires_at IS NULL OR m.expires_at > ($1).clock)
            ELSE
                m.created_at <= ($1).as_of
                AND (m.superseded_at IS NULL OR m.superseded_at > ($1).as_of)
                AND (m.forgotten_at IS NULL OR m.forgotten_at > ($1).as_of)
                AND (m.archived_at IS NULL OR m.archived_at > ($1).as_of OR ($1).include_archived)
                AND (m.expires_at IS NULL OR m.expires_at > ($1).as_of)
            END
     FROM brain.memory m
                    WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id)
             ORDER BY e.dist
             LIMIT 100) ) AS k
              WHERE 1 - k.dist >= ($1).vector_min_similarity) AS x
        WHERE x.r <= 100 ), lex AS (
            SELECT x.memory_id, row_number() OVER (ORDER BY x.bm25 DESC, x.memory_id DESC) AS r, x.bm25
            FROM (
        SELECT m.memory_id,
               sum(u.idf * u.tf * (($1).bm25[1] + 1)
                   / (u.tf + ($1).bm25[1] * (1 - ($1).bm25[2] + ($1).bm25[2] * coalesce(m.lexical_len, 0) / ($1).bm25[3]))) AS bm25
        FROM (WITH held AS MATERIALIZED (SELECT m.memory_id, m.tsv || ''::tsvector AS tsv, m.lexical_len FROM brain.memory m WHERE m.tsv @@ ($1).tsq AND 
        m.workspace_id = ($1).workspace_id
        AND (($1).kinds IS NULL OR m.kind = ANY (($1).kinds))
        AND (($1).categories IS NULL OR m.category = ANY (($1).categories))
        AND (($1).project IS NULL OR m.project IN (($1).project, ''))
        AND (($1).tags IS NULL OR m.tags @> ($1).tags)
        AND (($1).people IS NULL OR m.people @> ($1).people)
        AND (($1).created_after IS NULL OR m.created_at >= ($1).created_after)
        AND (($1).created_before IS NULL OR m.created_at < ($1).created_before)
        -- provenance: a source_ref ending in / is a folder, matching every ref under it
        AND (($1).source_system IS NULL OR m.source_system = ($1).source_system)
        AND (($1).source_ref IS NULL OR m.source_ref = ($1).source_ref
             OR right(($1).source_ref, 1) = '/' AND starts_with(m.source_ref, ($1).source_ref))
        AND CASE WHEN ($1).as_of IS NULL THEN
                (m.state = 'active' OR (($1).include_superseded AND m.state = 'superseded')
                 OR (($1).include_archived AND m.state = 'archived'))
                -- dormant facts stay: decay lowers their rank, it never hides them (search's include_dormant is kept for callers)
                AND (m.expires_at IS NULL OR m.expires_at > ($1).clock)
            ELSE
                m.created_at <= ($1).as_of
                AND (m.superseded_at IS NULL OR m.superseded_at > ($1).as_of)
                AND (m.forgotten_at IS NULL OR m.forgotten_at > ($1).as_of)
                AND (m.archived_at IS NULL OR m.archived_at > ($1).as_of OR ($1).include_archived)
                AND (m.expires_at IS NULL OR m.expires_at > ($1).as_of)
            END
    ) SELECT h.memory_id, h.tsv, h.lexical_len FROM held h LIMIT 1000) AS m
        CROSS JOIN LATERAL (
            SELECT w.idf, CASE WHEN m.tsv @@ w.ab THEN 1 WHEN m.tsv @@ w.c THEN ($1).bm25[4] ELSE 0 END AS tf
            FROM unnest(($1).words_ab, ($1).words_c, ($1).words_idf) AS w(ab, c, idf)) AS u
        WHERE u.tf > 0
        GROUP BY m.memory_id ) AS x
            ORDER BY x.bm25 DESC, x.memory_id DESC
            LIMIT 100 ), fuz AS (SELECT NULL::bigint AS memory_id, NULL::bigint AS r WHERE false),
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
        skills AS (SELECT NULL::bigint AS memory_id, NULL::text AS skill, NULL::bigint AS r WHERE false),
        -- the BM25 of candidates the lexical leg did not rank (when the query has words)
        unranked AS (
        SELECT m.memory_id,
               sum(u.idf * u.tf * (($1).bm25[1] + 1)
                   / (u.tf + ($1).bm25[1] * (1 - ($1).bm25[2] + ($1).bm25[2] * coalesce(m.lexical_len, 0) / ($1).bm25[3]))) AS bm25
        FROM (SELECT m.memory_id, m.tsv || ''::tsvector AS tsv, m.lexical_len FROM fused f JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id WHERE f.lexical_rank IS NULL AND ($1).bm25[5] > 0 OFFSET 0) AS m
        CROSS JOIN LATERAL (
            SELECT w.idf, CASE WHEN m.tsv @@ w.ab THEN 1 WHEN m.tsv @@ w.c THEN ($1).bm25[4] ELSE 0 END AS tf
            FROM unnest(($1).words_ab, ($1).words_c, ($1).words_idf) AS w(ab, c, idf)) AS u
        WHERE u.tf > 0
        GROUP BY m.memory_id ),
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
                               CASE WHEN f.vector_rank IS NOT NULL THEN f.similarity ELSE (SELECT 1 - (e.embedding::public.vector(384) OPERATOR(public.<=>) ($1).embedding::public.vector(384)) FROM brain.embedding e WHERE e.workspace_id = ($1).workspace_id AND e.space_id = 7 AND e.memory_id = f.memory_id) END AS sim,
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
                          THEN 0.25 ELSE 1 END AS score,
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
                   row_number() OVER (ORDER BY sc.part_place > 1, 0 > 0 AND sc.thread_place > 0,
                                               sc.score * power(0.6, coalesce((
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
                          -- The floor answers "nothing relevant": when no candidate reaches
                          -- it, no hit; when one does, the ranking as it is (it never trims).
                          AND EXISTS (SELECT FROM scored b WHERE b.verdict >= ($1).min_relevance)) AS sc
                  WINDOW thread_order AS (PARTITION BY sc.thread ORDER BY sc.part_place > 1, sc.score DESC,
                                                                           sc.rrf DESC, sc.memory_id DESC)) AS sc
        ),
        -- the page first (max_results lookups, not one per candidate), then on
        -- request each relevant hit's neighbours in its thread, after it
        page AS (
            SELECT r.*, row_number() OVER (ORDER BY r.tier, r.place) AS hit FROM ranked r
            ORDER BY r.tier, r.place LIMIT ($1).max_results
        ),
        expanded AS (
            -- keep: skills and hits at least min_relevance relevant first (0), then
            -- neighbours (1), then the page's other hits (2): a neighbour takes the
            -- place of a hit below the floor, never of a relevant one
            SELECT p.memory_id, p.skill, p.vector_rank, p.lexical_rank, p.fuzzy_rank, p.score, p.relevance,
                   p.verdict, NULL::bigint AS neighbour_of, p.hit, 0 AS dist, 0 AS pos,
                   CASE WHEN p.tier = 0 OR p.relevance >= ($1).min_relevance THEN 0 ELSE 2 END AS keep
            FROM page p
            UNION ALL
            SELECT n.memory_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, p.memory_id, p.hit,
                   abs(n.position - h.position), n.position, 1
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
        ),
        -- the results' active authored memories, read once: what a newer one may contradict
        authored AS MATERIALIZED (
            SELECT n.memory_id, n.kind, n.project, n.created_at, n.headline, n.body
            FROM chosen c JOIN brain.memory n ON n.workspace_id = ($1).workspace_id AND n.memory_id = c.memory_id
            WHERE n.state = 'active' AND n.origin IN ('explicit', 'overlay')
        )
        SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.match_preview(m.body, ($1).query),
               rk.score::double precision, rk.vector_rank, rk.lexical_rank, rk.fuzzy_rank, v.sim,
               m.state, m.pinned, m.superseded_by,
               CASE WHEN m.state = 'superseded' THEN brain.current_version(m.memory_id) ELSE m.memory_id END,
               rk.skill, m.created_at,
               CASE WHEN brain._is_flagged(m.flag_reasons, m.flag_confirmed_at) THEN m.flag_reasons END,
               rk.relevance::real, m.source_system, m.source_ref, m.metadata, m.thread, m.position, rk.neighbour_of,
               -- a newer authored memory among the results, of the same kind and project, as
               -- near as the space's related similarity (headline trigrams without a query
               -- vector) and differing in distinguishing terms only: it may contradict this one
               CASE WHEN m.origin IN ('explicit', 'overlay') THEN (
                   SELECT n.memory_id
                   FROM (SELECT n.* FROM authored n
                         WHERE n.memory_id <> m.memory_id AND n.kind = m.kind AND n.project = m.project
                           AND n.created_at > m.created_at
                         OFFSET 0) AS n  -- the cheap tests first, for the few pairs they leave
                   WHERE (SELECT 1 - (a.embedding::public.vector(384) OPERATOR(public.<=>) b.embedding::public.vector(384)) FROM brain.embedding a, brain.embedding b WHERE a.workspace_id = ($1).workspace_id AND a.space_id = 7 AND a.memory_id = m.memory_id AND b.workspace_id = ($1).workspace_id AND b.space_id = 7 AND b.memory_id = n.memory_id) >= 0.75
                     AND brain._distinct_facts(m.headline || E'\n' || m.body, n.headline || E'\n' || n.body)
                   ORDER BY n.created_at DESC, n.memory_id DESC
                   LIMIT 1) END,
               rk.verdict::real
        FROM chosen rk
        JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = rk.memory_id
        LEFT JOIN vec v ON v.memory_id = rk.memory_id
        ORDER BY rk.hit, rk.neighbour_of IS NOT NULL, rk.pos, rk.memory_id
