-- Retrieval's text index: the workspace a search runs in (brain._caller_workspace),
-- code and exact tokens, the text vector every memory is indexed by (trigger
-- memory_tsv), the corpus counts BM25 reads, and the pure parts of search's
-- statement (relevance, settings, the shared filter, BM25). The rest of search:
-- 005a-search-words.sql (query words), 005b-search-statement.sql (the statement),
-- 005c-search-run.sql (brain.search), 005d-search-reads.sql (previews, skills, recent).

-- The workspace of a function that runs as the owner of schema brain
-- (SECURITY DEFINER: brain.search, brain.analyze_lexemes), with the access it
-- needs (NULL: any): brain.current_workspace checks the session's login role,
-- and a session that SET ROLE (brain serve runs a token's request as its
-- role) keeps no more than that role has.
DROP FUNCTION IF EXISTS brain._caller_workspace();
CREATE OR REPLACE FUNCTION brain._caller_workspace(need text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := CASE WHEN need IS NULL THEN brain.current_workspace() ELSE brain.current_workspace(need) END;
    acting text := nullif(nullif(current_setting('role', true), 'none'), '');
    levels text[] := ARRAY['read', 'write', 'admin'];
    held text;
BEGIN
    IF acting IS NOT NULL THEN
        held := brain._access(ws, acting);
        IF held IS NULL OR array_position(levels, held) < coalesce(array_position(levels, need), 1) THEN
            RAISE EXCEPTION USING ERRCODE = 'BR020',
                MESSAGE = format('Role %s has no %s access to workspace %s.', acting, coalesce(need, 'read'), ws),
                DETAIL = jsonb_build_object('role', acting, 'workspace', ws, 'access', held)::text,
                HINT = 'See your workspaces with brain.list_workspaces(); an admin grants access.';
        END IF;
    END IF;
    RETURN ws;
END
$$;

-- Identifiers, version strings and code tokens as typed: words joined by
-- underscores or colons (idle_timeout, ERR_SSL_PROTOCOL, std::vector),
-- lowercased, with each leading run of two or more parts (err_ssl,
-- err_ssl_protocol), so a query for the start of an identifier matches as
-- written. The english parser splits them at the underscore; dotted names and
-- versions (v2.3.1, app.config.yml) it keeps whole already.
CREATE OR REPLACE FUNCTION brain.code_tokens(t text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT coalesce(array_agg(DISTINCT p.tok), '{}')
    FROM (SELECT lower(r.m[1]) AS word
          FROM regexp_matches(coalesce(t, ''), '([A-Za-z0-9]+(?:[_:]+[A-Za-z0-9]+)+)', 'g') AS r(m)
          -- (a one-time filter: no pattern runs on a text without a _ or a :)
          WHERE strpos(t, '_') > 0 OR strpos(t, ':') > 0) AS w
    CROSS JOIN LATERAL (
        SELECT array_to_string((regexp_split_to_array(w.word, '[_:]+'))[1:k], '_') AS tok
        FROM generate_series(2, least(cardinality(regexp_split_to_array(w.word, '[_:]+')), 6)) AS k
    ) AS p
    WHERE length(p.tok) <= 200
$$;
COMMENT ON FUNCTION brain.code_tokens IS
    'Identifiers joined by _ or : (idle_timeout, ERR_SSL_PROTOCOL), lowercased, with their leading runs of 2+ parts: indexed and searched whole beside the parts the english parser splits them into.';

-- The tokens of a short query (three words at most) that a user types to
-- find the memory holding them verbatim: IP addresses, error codes,
-- identifiers (snake_case, CamelCase, zebra-7), hex ids, versions, paths,
-- ticket keys. A token counts when it holds a digit (and is not a plain
-- number of four digits or fewer: a year, a count), joins letters or digits
-- with _ . / : @ or #, or has a capital after its first letter. A memory
-- holding every one of them verbatim is evidence whatever its vector says
-- (brain.search: exact_token_relevance). Lowercased, in query order.
CREATE OR REPLACE FUNCTION brain.exact_tokens(query text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(array_agg(DISTINCT lower(w.tok)), '{}')
    FROM regexp_matches(coalesce(query, ''), '([[:alnum:]]+(?:[._/:@#+-]+[[:alnum:]]+)*)', 'g') AS m(g),
         LATERAL (SELECT m.g[1] AS tok) AS w
    WHERE cardinality(regexp_split_to_array(brain.trim_space(coalesce(query, '')), '\s+')) <= 3
      AND length(w.tok) >= 3
      AND (w.tok ~ '[0-9]' AND NOT (w.tok ~ '^[0-9]+$' AND length(w.tok) <= 4)
           OR w.tok ~ '[[:alnum:]][_./:@#][[:alnum:]]'
           OR w.tok ~ '^[[:alpha:]].*[[:upper:]]')
$$;
COMMENT ON FUNCTION brain.exact_tokens IS
    'The tokens of a query of at most three words that name one thing verbatim (IPs, error codes, snake_case and CamelCase identifiers, hex ids, versions, paths, ticket keys), lowercased: a memory holding them all ranks as evidence (exact_token_relevance, docs/ranking.md).';

-- Whether a text holds every token verbatim (case-insensitive), each as a
-- whole token: 10.20.30.4 is not in 10.20.30.40.
CREATE OR REPLACE FUNCTION brain.holds_tokens(t text, tokens text[])
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT cardinality(tokens) > 0 AND NOT EXISTS (
        SELECT FROM unnest(tokens) AS k(tok)
        -- a substring test first: the pattern only where the token occurs at all
        WHERE strpos(lower(coalesce(t, '')), k.tok) = 0
           OR NOT coalesce(t, '') ~* ('(^|[^[:alnum:]_.:@#+-])' || regexp_replace(k.tok, '([^[:alnum:][:space:]])', '\\\1', 'g')
                                      || '($|[^[:alnum:]_./:@#+-]|[.:,;!?]+(\s|$))'))
$$;
COMMENT ON FUNCTION brain.holds_tokens IS
    'True when the text holds every token verbatim (case-insensitive) as a whole token.';

-- The full-text vector of a memory: headline (A), body (B), context (C),
-- and the code tokens of headline and body (B) as typed.
CREATE OR REPLACE FUNCTION brain.memory_tsv(headline text, body text, context text)
RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT setweight(to_tsvector('english'::regconfig, coalesce(headline, '')), 'A')
           || setweight(to_tsvector('english'::regconfig, coalesce(body, '')), 'B')
           || setweight(to_tsvector('english'::regconfig, coalesce(context, '')), 'C')
           || coalesce((SELECT string_agg(quote_literal(c.tok) || ':1B', ' ')::tsvector
                        FROM unnest(brain.code_tokens(coalesce(headline, '') || ' ' || coalesce(body, ''))) AS c(tok)),
                       ''::tsvector)
$$;
COMMENT ON FUNCTION brain.memory_tsv IS
    'The full-text vector the lexical leg searches: headline words weigh A, body words B, context words C, plus identifiers whole (brain.code_tokens).';

-- Fills tsv, lexical_len, fact_terms (brain.distinguishing_terms) and
-- naming_words (brain._naming_words) on every write of the text, and keeps the
-- workspace's lexeme count in step when a memory's text changes in place.
CREATE OR REPLACE FUNCTION brain._memory_tsv()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.tsv := brain.memory_tsv(NEW.headline, NEW.body, NEW.context);
    NEW.fact_terms := brain.distinguishing_terms(NEW.headline || E'\n' || NEW.body);
    NEW.naming_words := brain._naming_words(brain._statement_text(NEW.origin, NEW.headline, NEW.body));
    NEW.lexical_len := length(to_tsvector('english'::regconfig,
                                          coalesce(NEW.headline, '') || ' ' || coalesce(NEW.body, '')));
    IF TG_OP = 'UPDATE' AND NEW.lexical_len IS DISTINCT FROM OLD.lexical_len THEN
        PERFORM brain._count_corpus(NEW.workspace_id, 0, coalesce(NEW.lexical_len, 0) - coalesce(OLD.lexical_len, 0));
    END IF;
    RETURN NEW;
END
$$;

-- Adds to the workspace's memory and lexeme counts (brain.lexical_corpus), in
-- a slot no other transaction holds: concurrent writers never wait here.
CREATE OR REPLACE FUNCTION brain._count_corpus(ws bigint, docs bigint, lexemes bigint)
RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    free integer;
BEGIN
    IF docs = 0 AND lexemes = 0 THEN
        RETURN;
    END IF;
    SELECT c.slot INTO free FROM brain.lexical_corpus c
    WHERE c.workspace_id = ws ORDER BY c.slot LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF free IS NOT NULL THEN
        UPDATE brain.lexical_corpus c SET docs = c.docs + _count_corpus.docs, lexemes = c.lexemes + _count_corpus.lexemes
        WHERE c.workspace_id = ws AND c.slot = free;
    ELSE
        -- Every slot is held by another writer (or there is none yet): a new one,
        -- named by this transaction's id. A slot named by the backend's pid could be
        -- one another writer had just taken above, and then this insert waited for it.
        INSERT INTO brain.lexical_corpus AS c (workspace_id, slot, docs, lexemes)
        VALUES (ws, -1 - (pg_current_xact_id()::text::bigint % 2147483647)::integer,
                _count_corpus.docs, _count_corpus.lexemes)
        ON CONFLICT (workspace_id, slot)
        DO UPDATE SET docs = c.docs + excluded.docs, lexemes = c.lexemes + excluded.lexemes;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION brain._count_corpus_rows()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d record;
BEGIN
    IF TG_OP = 'INSERT' THEN
        FOR d IN SELECT n.workspace_id, count(*) AS docs, coalesce(sum(n.lexical_len), 0) AS lexemes
                 FROM new_rows n GROUP BY 1 ORDER BY 1 LOOP
            PERFORM brain._count_corpus(d.workspace_id, d.docs, d.lexemes);
        END LOOP;
    ELSE
        FOR d IN SELECT o.workspace_id, count(*) AS docs, coalesce(sum(o.lexical_len), 0) AS lexemes
                 FROM old_rows o GROUP BY 1 ORDER BY 1 LOOP
            PERFORM brain._count_corpus(d.workspace_id, -d.docs, -d.lexemes);
        END LOOP;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER memory_tsv BEFORE INSERT OR UPDATE OF headline, body, context ON brain.memory
    FOR EACH ROW EXECUTE FUNCTION brain._memory_tsv();
CREATE OR REPLACE TRIGGER memory_corpus_insert AFTER INSERT ON brain.memory
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();
CREATE OR REPLACE TRIGGER memory_corpus_delete AFTER DELETE ON brain.memory
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION brain._count_corpus_rows();

-- Calibrated relevance in [0, 1] (docs/ranking.md): the probability, by
-- logistic maps fitted on the dev questions, that a result is evidence for
-- the query. Each leg's evidence is a log-odds: vector slope x (similarity -
-- center), with the embedding space's center and slope; lexical lex_slope x
-- (BM25 share - lex_center). With both, bias + w_vec x vector + w_lex x
-- lexical; with one, that one (NULL similarity: the query had no embedding
-- or the memory has none in the space; NULL share: the query had no word
-- the workspace holds). c: {center, slope, lex_center, lex_slope, bias,
-- w_vec, w_lex}.
CREATE OR REPLACE FUNCTION brain.relevance(sim double precision, lex double precision, c double precision[])
RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 1 / (1 + exp(-least(50, greatest(-50,
               CASE WHEN sim IS NULL THEN c[4] * (lex - c[3])
                    WHEN lex IS NULL THEN c[2] * (sim - c[1])
                    ELSE c[5] + c[6] * c[2] * (sim - c[1]) + c[7] * c[4] * (lex - c[3]) END))))
$$;
COMMENT ON FUNCTION brain.relevance IS
    'Calibrated relevance of a result (docs/ranking.md): the logistic of its evidence. Vector: slope x (similarity - center), the space''s; lexical: lex_slope x (BM25 share - lex_center); both: bias + w_vec x vector + w_lex x lexical. c = {center, slope, lex_center, lex_slope, bias, w_vec, w_lex}; NULL when neither evidence is known.';

-- Parts of the statement brain.search runs (005b-search-statement.sql builds it).

-- BM25 is scored inside brain.search, set-based (brain._search_bm25): this
-- per-memory function could not be inlined and cost a call per memory.
DROP FUNCTION IF EXISTS brain._bm25(tsvector, integer, tsquery[], tsquery[], double precision[], double precision[]);

-- The statement brain.search runs is built from fragments, a function each: the
-- filter every leg shares (brain._search_filter, here), the vector, lexical, trigram
-- and skill legs, and the fusion and ranking over them (brain._search_statement,
-- 005b-search-statement.sql).
-- It has one parameter, $1, a brain.search_request, whose fields the fragments
-- name. tests/golden/search/ holds the statement each kind of call builds: a
-- change to a fragment shows there as a diff (tests/test_search_golden.py).

-- The WHERE clause every search leg shares, over brain.memory m: the
-- caller's workspace and filters, fields of the statement's one parameter
-- ($1, a brain.search_request).
CREATE OR REPLACE FUNCTION brain._search_filter()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT $f$
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
    $f$
$$;

-- The BM25 score (docs/ranking.md) of the memories a subquery gives as
-- (memory_id, tsv, lexical_len): for each query word, idf x tf (k1 + 1) /
-- (tf + k1 (1 - b + b len / avg len)), with tf 1 when the headline or body
-- holds it, lexical_context_weight when only the context does; ($1).bm25 holds
-- k1, b, average length, context weight. One grouped join: a function call
-- per memory cost more than the scoring. Each word's term is rounded to a
-- multiple of 2^-30 so that their sum is exact in any order: a sum of floats
-- depends on the order its rows come in, which the plan decides, and equal
-- scores then differed in their last bits and ranked apart (a restored
-- database, planned otherwise, ranked ties otherwise). (Numeric sums, exact
-- too, cost a search about 1 ms more.)
CREATE OR REPLACE FUNCTION brain._search_bm25(memories text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($b$
        SELECT m.memory_id,
               sum(round(u.idf * u.tf * (($1).bm25[1] + 1)
                         / (u.tf + ($1).bm25[1] * (1 - ($1).bm25[2] + ($1).bm25[2] * coalesce(m.lexical_len, 0) / ($1).bm25[3]))
                         * 1073741824) / 1073741824) AS bm25
        FROM (%s) AS m
        CROSS JOIN LATERAL (
            SELECT w.idf, CASE WHEN m.tsv @@ w.ab THEN 1 WHEN m.tsv @@ w.c THEN ($1).bm25[4] ELSE 0 END AS tf
            FROM unnest(($1).words_ab, ($1).words_c, ($1).words_idf) AS w(ab, c, idf)) AS u
        WHERE u.tf > 0
        GROUP BY m.memory_id $b$, memories)
$f$;
