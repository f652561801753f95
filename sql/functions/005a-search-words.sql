-- Search's words: the dictionary of words for the same thing, the query's lexical
-- terms and phrases, and the lexeme statistics the lexical leg weighs them by.

-- The form a word or phrase of the dictionary takes (brain.word_groups): a
-- text of one english lexeme is that lexeme ('Postgres' -> 'postgr'); a text
-- of two or more is a phrase, kept as written, lower-cased, its white space
-- single ('Schema Changes' -> 'schema changes'), and matched as a phrase of
-- its lexemes (brain.word_tsquery: stop words count as gaps, '9 to 5' is
-- '9' <2> '5'). A text of stop words only is nothing (NULL).
CREATE OR REPLACE FUNCTION brain.search_term(t text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(v) > 1 THEN regexp_replace(lower(brain.trim_space(t)), '\s+', ' ', 'g')
                ELSE (tsvector_to_array(v))[1] END
    FROM to_tsvector('english'::regconfig, coalesce(t, '')) AS v
$$;
COMMENT ON FUNCTION brain.search_term IS
    'A word or phrase as the dictionary of words for the same thing holds it: one english lexeme, or a phrase of two or more (lower-cased, matched as a phrase of its lexemes); NULL for stop words only.';

-- Words people use for the same thing (docs/ranking.md, "Words for the same
-- thing"): abbreviations and spellings of technical names, and phrases that
-- say the same as a word or another phrase ("schema change" -> "migration",
-- "noon" -> "business hours"), each with the word it stands for, as
-- brain.search_term gives them (tests/test_search_words.py checks them). A
-- query word or phrase of a group matches every word and phrase of it in a
-- memory (brain.word_group). A workspace adds its own with the setting
-- search_words ({"word or phrase": "the word or phrase it means"});
-- search_builtin_words false leaves these out. No SET clause: inlined where
-- it is read.
CREATE OR REPLACE FUNCTION brain.builtin_search_words()
RETURNS TABLE (word text, means text, lexeme text, means_lexeme text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    VALUES ('postgres', 'postgresql', 'postgr', 'postgresql'), ('pg', 'postgresql', 'pg', 'postgresql'),
           ('psql', 'postgresql', 'psql', 'postgresql'), ('pgsql', 'postgresql', 'pgsql', 'postgresql'),
           ('k8s', 'kubernetes', 'k8s', 'kubernet'), ('kube', 'kubernetes', 'kube', 'kubernet'),
           ('js', 'javascript', 'js', 'javascript'), ('ecmascript', 'javascript', 'ecmascript', 'javascript'),
           ('py', 'python', 'py', 'python'), ('python3', 'python', 'python3', 'python'),
           ('db', 'database', 'db', 'databas'), ('repo', 'repository', 'repo', 'repositori'),
           ('config', 'configuration', 'config', 'configur'), ('cfg', 'configuration', 'cfg', 'configur'),
           ('conf', 'configuration', 'conf', 'configur'), ('env', 'environment', 'env', 'environ'),
           ('auth', 'authentication', 'auth', 'authent'), ('authn', 'authentication', 'authn', 'authent'),
           ('nodejs', 'node.js', 'nodej', 'node.js'), ('mongo', 'mongodb', 'mongo', 'mongodb'),
           ('gh', 'github', 'gh', 'github'), ('tf', 'terraform', 'tf', 'terraform'),
           ('yml', 'yaml', 'yml', 'yaml'), ('msg', 'message', 'msg', 'messag'),
           ('img', 'image', 'img', 'imag'), ('pwd', 'password', 'pwd', 'password'),
           ('passwd', 'password', 'passwd', 'password'), ('dir', 'directory', 'dir', 'directori'),
           ('folder', 'directory', 'folder', 'directori'), ('max', 'maximum', 'max', 'maximum'),
           ('ms', 'millisecond', 'ms', 'millisecond'), ('msec', 'millisecond', 'msec', 'millisecond'),
           ('millis', 'millisecond', 'milli', 'millisecond'), ('app', 'application', 'app', 'applic'),
           ('admin', 'administrator', 'admin', 'administr'), ('spec', 'specification', 'spec', 'specif'),
           ('func', 'function', 'func', 'function'), ('fn', 'function', 'fn', 'function'),
           ('arg', 'argument', 'arg', 'argument'), ('param', 'parameter', 'param', 'paramet'),
           ('var', 'variable', 'var', 'variabl'), ('lib', 'library', 'lib', 'librari'),
           ('pkg', 'package', 'pkg', 'packag'), ('req', 'request', 'req', 'request'),
           ('resp', 'response', 'resp', 'respons'), ('txn', 'transaction', 'txn', 'transact'),
           ('tx', 'transaction', 'tx', 'transact'), ('ssl', 'tls', 'ssl', 'tls'),
           ('sched', 'scheduler', 'sched', 'schedul'), ('creds', 'credentials', 'cred', 'credenti'),
           ('secs', 'seconds', 'sec', 'second'), ('temp', 'temporary', 'temp', 'temporari'),
           ('tmp', 'temporary', 'tmp', 'temporari'), ('elastic', 'elasticsearch', 'elast', 'elasticsearch'),
           ('docs', 'documentation', 'doc', 'document'), ('dev', 'development', 'dev', 'develop'),
           -- everyday abbreviations
           ('dr', 'doctor', 'dr', 'doctor'), ('appt', 'appointment', 'appt', 'appoint'),
           ('apt', 'apartment', 'apt', 'apart'), ('bday', 'birthday', 'bday', 'birthday'),
           ('govt', 'government', 'govt', 'govern'), ('dept', 'department', 'dept', 'depart'),
           ('mgr', 'manager', 'mgr', 'manag'),
           -- phrases: a change of schema is a migration; the working day is business hours
           ('schema change', 'migration', 'schema change', 'migrat'),
           ('schema update', 'migration', 'schema update', 'migrat'),
           ('working hours', 'business hours', 'working hours', 'business hours'),
           ('work hours', 'business hours', 'work hours', 'business hours'),
           ('office hours', 'business hours', 'office hours', 'business hours'),
           ('9 to 5', 'business hours', '9 to 5', 'business hours'),
           ('nine to five', 'business hours', 'nine to five', 'business hours'),
           ('noon', 'business hours', 'noon', 'business hours'),
           ('midday', 'business hours', 'midday', 'business hours'),
           ('lunchtime', 'business hours', 'lunchtim', 'business hours'),
           ('daytime', 'business hours', 'daytim', 'business hours'),
           ('pr', 'pull request', 'pr', 'pull request'), ('merge request', 'pull request', 'merge request', 'pull request'),
           ('ci', 'continuous integration', 'ci', 'continuous integration'),
           ('ttl', 'time to live', 'ttl', 'time to live'),
           ('eol', 'end of life', 'eol', 'end of life'),
           ('vm', 'virtual machine', 'vm', 'virtual machine'),
           ('lb', 'load balancer', 'lb', 'load balancer'),
           ('cli', 'command line', 'cli', 'command line'),
           ('ui', 'user interface', 'ui', 'user interface')
$$;
COMMENT ON FUNCTION brain.builtin_search_words IS
    'The built-in dictionary of words and phrases people use for the same thing (postgres/PostgreSQL/pg, k8s/Kubernetes, schema change/migration, noon/business hours, ...): word, the word it means, and both as brain.search_term gives them (a lexeme, or a phrase). A workspace extends it with the setting search_words.';

-- The lexemes each query lexeme matches: itself, and with the dictionary
-- (built-in unless builtin is false, plus the workspace's search_words,
-- which wins for a word both name) the word it means and every word that
-- means the same. PL/pgSQL, so that its plan is kept for the session: as a
-- SQL function it was planned again on every call (1 ms), and as a call
-- per word it cost 0.2 ms a word.
CREATE OR REPLACE FUNCTION brain.word_groups(lexemes text[], own jsonb DEFAULT '{}', builtin boolean DEFAULT true)
RETURNS TABLE (lexeme text, grp text[])
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $f$
BEGIN
    RETURN QUERY
    -- the dictionary, read once: the workspace's words (o 0, which win) and the built-in ones
    WITH dict AS MATERIALIZED (
        SELECT 0 AS o, brain.search_term(e.key) AS lexeme, brain.search_term(e.value) AS means_lexeme
        FROM jsonb_each_text(CASE WHEN jsonb_typeof(own) = 'object' THEN own ELSE '{}' END) AS e
        UNION ALL
        SELECT 1, b.lexeme, b.means_lexeme FROM brain.builtin_search_words() AS b WHERE builtin
    )
    SELECT l.lexeme,
           ARRAY(SELECT DISTINCT y.x FROM (
                     SELECT l.lexeme AS x
                     UNION ALL SELECT c.means
                     UNION ALL SELECT d.lexeme FROM dict d
                     WHERE d.means_lexeme = c.means AND d.lexeme IS NOT NULL) AS y
                 ORDER BY 1)
    FROM unnest(lexemes) AS l(lexeme)
    CROSS JOIN LATERAL (
        SELECT coalesce((
            SELECT d.means_lexeme FROM dict d
            WHERE d.lexeme = l.lexeme AND d.means_lexeme IS NOT NULL
            ORDER BY d.o LIMIT 1), l.lexeme) AS means) AS c;
END
$f$;
COMMENT ON FUNCTION brain.word_groups IS
    'The lexemes (and phrases, brain.search_term) each query lexeme or phrase matches: itself, the word it means and the words that mean the same, by the built-in dictionary (brain.builtin_search_words, unless builtin is false) and a workspace''s own (the setting search_words, own).';

-- One lexeme's group (brain.word_groups).
CREATE OR REPLACE FUNCTION brain.word_group(lexeme text, own jsonb DEFAULT '{}', builtin boolean DEFAULT true)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT g.grp FROM brain.word_groups(ARRAY[lexeme], own, builtin) AS g
$$;
COMMENT ON FUNCTION brain.word_group IS
    'The lexemes a query lexeme matches (brain.word_groups for one).';

-- A query word as a tsquery: its group's lexemes OR-ed, each with these
-- weights ('' for any); a phrase of the group (brain.search_term: a space in
-- it) as the phrase of its lexemes, each with the weights. Called once per
-- query word, not per row. (Its arguments are checked, and each word is quoted as a tsquery literal, so
-- that no argument is read as query syntax: weights other than the letters A to
-- D are BR009, and a word with quotes, backslashes or operators is one word.)
CREATE OR REPLACE FUNCTION brain.word_tsquery(grp text[], weights text DEFAULT '')
RETURNS tsquery
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF weights IS NULL OR weights !~ '^[ABCDabcd]{0,4}$' THEN
        PERFORM brain._raise('BR009', 'weights are up to four of the letters A, B, C and D.',
            jsonb_build_object('field', 'weights'), 'For example AB, C, or '''' for none.');
    END IF;
    RETURN (
        SELECT string_agg(x.q, ' | ')::tsquery
        FROM (SELECT CASE WHEN strpos(g, ' ') > 0
                          THEN '(' || regexp_replace(phraseto_tsquery('english'::regconfig, g)::text,
                                                     '(''(?:[^'']|'''')*'')',
                                                     CASE WHEN weights = '' THEN '\1' ELSE '\1:' || weights END, 'g') || ')'
                          ELSE '''' || replace(replace(g, '\', '\\'), '''', '''''') || ''''
                               || CASE WHEN weights = '' THEN '' ELSE ':' || weights END END AS q
              FROM unnest(grp) AS g
              WHERE brain.trim_space(g) <> ''
                AND (strpos(g, ' ') = 0 OR phraseto_tsquery('english'::regconfig, g)::text <> '')) AS x);
END
$$;
COMMENT ON FUNCTION brain.word_tsquery IS
    'A query word as a tsquery: the lexemes of its group (brain.word_groups) OR-ed, each with the given weights (''AB'', ''C'', or none); a phrase of the group as the phrase of its lexemes.';

-- The built-in dictionary's phrases (brain.builtin_search_words), each with
-- its lexemes and its phrase query, as constants: written out here, at
-- migrate time, from the dictionary, so that a search does not stem every
-- phrase again (25 phrases cost 0.3 ms a query).
DO $do$
BEGIN
    EXECUTE format($f$
        CREATE OR REPLACE FUNCTION brain._builtin_phrases()
        RETURNS TABLE (term text, lexemes text[], q tsquery)
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $b$ %s $b$ $f$,
        coalesce((SELECT 'VALUES ' || string_agg(format('(%L, %L::text[], %L::tsquery)', t.term,
                                                       tsvector_to_array(to_tsvector('english'::regconfig, t.term)),
                                                       phraseto_tsquery('english'::regconfig, t.term)::text),
                                                ', ' ORDER BY t.term)
                  FROM (SELECT DISTINCT unnest(ARRAY[b.lexeme, b.means_lexeme]) AS term
                        FROM brain.builtin_search_words() AS b) AS t
                  WHERE strpos(t.term, ' ') > 0),
                 'SELECT NULL::text, NULL::text[], NULL::tsquery WHERE false'));
END
$do$;

-- The dictionary's phrases (brain.search_term with a space: built-in unless
-- builtin is false, and the workspace's own) that a query holds, as phrases
-- of its lexemes: brain.lexical_terms weighs each as one word. PL/pgSQL, so
-- that its plan is kept for the session and the query's text vector is
-- computed once; a phrase is matched only when the query holds all its
-- lexemes.
DROP FUNCTION IF EXISTS brain._query_phrases(text, jsonb, boolean);
CREATE OR REPLACE FUNCTION brain._query_phrases(query text, own jsonb, builtin boolean)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $f$
DECLARE
    v tsvector := to_tsvector('english'::regconfig, coalesce(query, ''));
    held text[] := tsvector_to_array(v);
BEGIN
    IF cardinality(held) < 2 THEN
        RETURN '{}';
    END IF;
    RETURN ARRAY(
        SELECT DISTINCT p.term
        FROM (SELECT b.term, b.lexemes, b.q FROM brain._builtin_phrases() AS b WHERE builtin
              UNION ALL
              SELECT t.term, tsvector_to_array(to_tsvector('english'::regconfig, t.term)),
                     phraseto_tsquery('english'::regconfig, t.term)
              FROM (SELECT unnest(ARRAY[brain.search_term(e.key), brain.search_term(e.value)]) AS term
                    FROM jsonb_each_text(CASE WHEN jsonb_typeof(own) = 'object' THEN own ELSE '{}' END) AS e) AS t
              WHERE strpos(t.term, ' ') > 0) AS p
        WHERE p.lexemes <@ held AND v @@ p.q);
END
$f$;

-- The words of a query as the lexical leg weighs them (BM25, docs/ranking.md):
-- each distinct lexeme of the query (english stemming, plus its code tokens),
-- how many of the workspace's memories hold it, its inverse document
-- frequency, and whether the leg looks for it. Document frequencies are
-- counted through an index, up to lexical_max_rows each (the work is
-- bounded whatever the words); a word past the cap is estimated from the
-- workspace's sampled word frequencies (brain.analyze_lexemes). A word they
-- list is not counted at all, its share of the sample standing for it:
-- counting visits a memory per row counted, up to the cap (at 1M memories,
-- 5-10 ms a common word), and a sample of up to 30,000 memories is the whole
-- of a smaller workspace. Only words too rare to be listed are counted. The leg looks
-- for the rarest words, until about lexical_max_rows memories match; a word
-- in more than lexical_max_term_share of the memories (and in more than a
-- tenth of lexical_max_rows) it never looks for: such words add to the score
-- of the memories the rare words found, and find none themselves.
-- brain._lexical_terms takes the workspace, its settings (brain._settings) and
-- its count of memories from its caller (search has them already), and gives
-- each word's group of words for the same thing (NULL: the word alone).
CREATE OR REPLACE FUNCTION brain._lexical_terms(query text, ws bigint, cfg jsonb, n_docs double precision)
RETURNS TABLE (lexeme text, docs bigint, idf double precision, searched boolean, grp text[])
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
-- Counted through an index, never a scan of the table, which would read every
-- memory's text vector (large ones from TOAST) to count a few of them; past
-- ten times the cap, through the word's posting list (below).
SET enable_seqscan = off
SET enable_indexscan = off
AS $$
DECLARE
    max_share double precision := (cfg->'lexical_max_term_share')::double precision;
    max_rows integer := (cfg->'lexical_max_rows')::integer;
    picked integer := 0;
    matched bigint := 0;
    found bigint;
    words text[] := '{}';
    counts bigint[] := '{}';
    shares double precision[] := '{}';
    capped text[] := '{}';
    w record;
    -- words for the same thing (brain.word_group)
    own jsonb := cfg->'search_words';
    builtin boolean := (cfg->>'search_builtin_words')::boolean;
    -- the dictionary's phrases the query holds ("schema changes"): each weighed as one word
    phrases text[] := CASE WHEN own IS DISTINCT FROM '{}'::jsonb OR builtin
                           THEN brain._query_phrases(query, own, builtin) ELSE '{}' END;
    -- the query's lexemes, in a variable: brain.word_groups is inlined only for
    -- arguments without a subquery (else it is planned again on every call, 1 ms)
    lexemes text[] := ARRAY(SELECT DISTINCT l
                            FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')))
                                        || brain.code_tokens(query)) AS l
                            LIMIT 64) || phrases;
    -- groups only when a word of the query is in a dictionary (most queries: none)
    grouping boolean := own IS DISTINCT FROM '{}'::jsonb
                        OR builtin AND EXISTS (SELECT FROM brain.builtin_search_words() AS b
                                               WHERE b.lexeme = ANY (lexemes) OR b.means_lexeme = ANY (lexemes));
    groups jsonb := '{}';  -- lexeme -> its group, for the words that have one
BEGIN
    IF grouping THEN
        SELECT coalesce(jsonb_object_agg(g.lexeme, to_jsonb(g.grp)) FILTER (WHERE cardinality(g.grp) > 1), '{}')
        INTO groups FROM brain.word_groups(lexemes, own, builtin) AS g;
    END IF;
    n_docs := greatest(coalesce(n_docs, 0), 1);
    FOR w IN
        WITH words AS (SELECT l AS lexeme FROM unnest(lexemes) AS l)
        -- the workspace's sampled frequencies, read once, and first only where a word
        -- may be skipped by them (below twice the cap none can be: then they are read
        -- after counting, for the words past the cap, if any)
        SELECT x.lexeme, e.share, e.listed, quote_literal(x.lexeme)::tsquery AS q, false AS grouped
        FROM words x LEFT JOIN brain._lexeme_shares(ws, ARRAY(SELECT x.lexeme FROM words x WHERE n_docs > 2 * max_rows)) AS e
             USING (lexeme)
    LOOP
        IF groups ? w.lexeme THEN
            w.q := brain.word_tsquery(ARRAY(SELECT jsonb_array_elements_text(groups -> w.lexeme)));
            w.grouped := true;
        ELSIF w.lexeme = ANY (phrases) THEN
            w.q := brain.word_tsquery(ARRAY[w.lexeme]);
            w.grouped := true;
        END IF;
        -- a word with others for the same thing is counted with them (its share alone would not do)
        IF w.listed AND NOT w.grouped THEN
            -- the workspace's sample lists it: its share of the memories (exact when the
            -- sample read every memory) is the count; past the cap, the estimate below
            found := least(greatest(round(w.share * n_docs), 1), max_rows + 1);
        ELSIF n_docs <= 10 * max_rows THEN
            -- a small workspace: one plan for every word, whichever index it takes
            SELECT count(*) INTO found
            FROM (SELECT FROM brain.memory m
                  WHERE m.workspace_id = ws AND m.tsv @@ w.q
                  LIMIT max_rows + 1) AS y;
        ELSE
            -- The word as a literal, so that the planner weighs it by the column's
            -- statistics and walks its posting list: as a parameter, the
            -- workspace's btree looked cheaper (row-level security adds its
            -- workspace condition), and that reads every memory of the workspace.
            EXECUTE format('SELECT count(*) FROM (SELECT FROM brain.memory m'
                           ' WHERE m.tsv @@ %L::tsquery AND m.workspace_id = $1 LIMIT %s) AS y',
                           w.q::text, max_rows + 1)
            INTO found USING ws;
        END IF;
        IF found > 0 THEN
            words := words || w.lexeme;
            counts := counts || found;
            shares := shares || CASE WHEN w.grouped THEN NULL ELSE w.share END;
            IF found > max_rows AND (w.share IS NULL OR w.grouped) THEN
                capped := capped || w.lexeme;
            END IF;
        END IF;
    END LOOP;
    -- A phrase some memory holds (or a word for the same thing) stands for its
    -- words: they are not weighed again on their own ("schema changes": not
    -- "schema" and "changes" beside it). A phrase no memory holds leaves them be.
    IF cardinality(phrases) > 0 THEN
        SELECT coalesce(array_agg(u.lexeme ORDER BY u.n), '{}'), coalesce(array_agg(u.found ORDER BY u.n), '{}'),
               coalesce(array_agg(u.share ORDER BY u.n), '{}')
        INTO words, counts, shares
        FROM unnest(words, counts, shares) WITH ORDINALITY AS u(lexeme, found, share, n)
        WHERE u.lexeme = ANY (phrases)
           OR NOT EXISTS (SELECT FROM unnest(words) AS p(term)
                          WHERE p.term = ANY (phrases)
                            AND to_tsvector('english'::regconfig, p.term) @@ quote_literal(u.lexeme)::tsquery);
    END IF;
    -- A word past the cap is estimated from the sampled frequencies: those read
    -- above, or now for the words counted past the cap (none: nothing is read).
    SELECT array_agg(CASE WHEN u.found <= max_rows THEN u.found
                          ELSE least(greatest(u.found, coalesce(u.share, e.share, 0) * n_docs), n_docs)::bigint END
                     ORDER BY u.n)
    INTO counts
    FROM unnest(words, counts, shares) WITH ORDINALITY AS u(lexeme, found, share, n)
    LEFT JOIN brain._lexeme_shares(ws, capped) AS e ON e.lexeme = u.lexeme;
    FOR w IN SELECT u.lexeme, u.docs FROM unnest(words, counts) AS u(lexeme, docs) ORDER BY 2, 1 LOOP
        lexeme := w.lexeme;
        docs := w.docs;
        idf := ln(1 + (n_docs - w.docs + 0.5) / (w.docs + 0.5));
        searched := NOT (w.docs > max_share * n_docs AND w.docs > max_rows / 10.0)
                    AND (picked = 0 OR matched + w.docs <= max_rows);
        grp := CASE WHEN groups ? w.lexeme THEN ARRAY(SELECT jsonb_array_elements_text(groups -> w.lexeme)) END;
        IF searched THEN
            picked := picked + 1;
            matched := matched + w.docs;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION brain.lexical_terms(query text)
RETURNS TABLE (lexeme text, docs bigint, idf double precision, searched boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT t.lexeme, t.docs, t.idf, t.searched
    FROM brain._lexical_terms(query, brain.current_workspace(), brain._settings(),
                              (SELECT sum(c.docs) FROM brain.lexical_corpus c
                               WHERE c.workspace_id = brain.current_workspace())) AS t
$$;
COMMENT ON FUNCTION brain.lexical_terms IS
    'The query''s words as the lexical leg weighs them: lexeme (english stem, identifier, or a phrase of the dictionary of words for the same thing, which then stands for its words), docs (memories of the workspace holding it; counted up to lexical_max_rows, estimated beyond), idf (BM25), searched (the leg finds memories by it; common words only add to the score of memories the rare ones found).';

-- The share of the workspace's memories holding each lexeme, by its own
-- sample (brain.lexeme_stat, filled by brain.analyze_lexemes): a lexeme not
-- listed is held by at most the sample's least share (an upper bound; not
-- sampled yet: 0), and whether the sample lists it. Never the whole table's
-- statistics, which would tell one workspace how often another's words occur.
DROP FUNCTION IF EXISTS brain._lexeme_stats(text[]);
CREATE OR REPLACE FUNCTION brain._lexeme_shares(ws bigint, lexemes text[])
RETURNS TABLE (lexeme text, share double precision, listed boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT l.lexeme, coalesce(s.share, (SELECT x.least_share FROM brain.lexeme_sample x WHERE x.workspace_id = ws), 0),
           s.share IS NOT NULL
    FROM unnest(lexemes) AS l(lexeme)
    LEFT JOIN brain.lexeme_stat s ON s.workspace_id = ws AND s.lexeme = l.lexeme
$$;

-- Samples the workspace's memories (up to sample_size of them, spread over
-- its ids) and keeps the lexemes held by five sampled memories or more, the
-- most common first, up to 5,000: what
-- brain.lexical_terms needs to skip counting common words and to estimate
-- those past its cap. As the owner: clients read the table, only this writes
-- it. brain.maintain runs it when the workspace has grown or shrunk by a
-- fifth since (and it is large enough for the estimates to matter).
CREATE OR REPLACE FUNCTION brain.analyze_lexemes(sample_size integer DEFAULT 30000)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain._caller_workspace('write');
    n_docs bigint;
    step bigint;
    sampled integer;
    least double precision;
    listed integer;
    sample text;
BEGIN
    IF sample_size IS NULL OR sample_size NOT BETWEEN 100 AND 1000000 THEN
        PERFORM brain._raise('BR009', 'sample_size lies between 100 and 1000000.',
            jsonb_build_object('sample_size', sample_size), 'The default is 30000.');
    END IF;
    PERFORM pg_advisory_xact_lock(brain._lock_key(ws, 'brain.analyze_lexemes'));
    SELECT coalesce(sum(c.docs), 0) INTO n_docs FROM brain.lexical_corpus c WHERE c.workspace_id = ws;
    step := greatest(1, ceil(n_docs::double precision / sample_size))::bigint;
    sample := format('SELECT m.tsv FROM brain.memory m WHERE m.workspace_id = %s AND m.memory_id %% %s = 0 LIMIT %s',
                     ws, step, sample_size);
    EXECUTE format('SELECT count(*) FROM (%s) AS x', replace(sample, 'm.tsv', '1')) INTO sampled;
    DELETE FROM brain.lexeme_stat s WHERE s.workspace_id = ws;
    INSERT INTO brain.lexeme_stat (workspace_id, lexeme, share)
    SELECT ws, t.word, t.ndoc::double precision / sampled
    FROM ts_stat(sample) AS t
    WHERE sampled > 0 AND t.ndoc >= 5
    ORDER BY t.ndoc DESC, t.word
    LIMIT 5000;
    GET DIAGNOSTICS listed = ROW_COUNT;
    least := CASE WHEN listed < 5000 THEN 5 / greatest(sampled, 1)::double precision
                  ELSE (SELECT min(s.share) FROM brain.lexeme_stat s WHERE s.workspace_id = ws) END;
    INSERT INTO brain.lexeme_sample AS x (workspace_id, docs, sampled, least_share, analyzed_at)
    VALUES (ws, n_docs, sampled, least, now())
    ON CONFLICT (workspace_id) DO UPDATE
    SET docs = excluded.docs, sampled = excluded.sampled, least_share = excluded.least_share,
        analyzed_at = excluded.analyzed_at;
    RETURN jsonb_build_object('memories', n_docs, 'sampled', sampled, 'lexemes', listed, 'least_share', least);
END
$$;
COMMENT ON FUNCTION brain.analyze_lexemes IS
    'Samples the workspace''s memories (up to sample_size) for the lexical leg''s word frequencies (brain.lexeme_stat); brain.maintain runs it when the workspace changed by a fifth.';

-- brain.analyze_lexemes when the workspace holds more memories than the
-- lexical leg counts each word up to (below that every word is counted) and
-- has grown or shrunk by a fifth since its last sample; NULL otherwise.
CREATE OR REPLACE FUNCTION brain._analyze_lexemes_if_due()
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    n_docs bigint;
    was bigint;
BEGIN
    SELECT coalesce(sum(c.docs), 0) INTO n_docs FROM brain.lexical_corpus c WHERE c.workspace_id = ws;
    SELECT x.docs INTO was FROM brain.lexeme_sample x WHERE x.workspace_id = ws;
    IF n_docs <= 2 * (brain.setting('lexical_max_rows'))::integer
       OR (was IS NOT NULL AND abs(n_docs - was) < 0.2 * greatest(was, 1)) THEN
        RETURN NULL;
    END IF;
    RETURN brain.analyze_lexemes();
END
$$;

-- The words the lexical leg looks for, OR-ed (NULL when none).
CREATE OR REPLACE FUNCTION brain.lexical_query(query text)
RETURNS tsquery
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT nullif(string_agg(brain.word_tsquery(brain.word_group(t.lexeme, brain.setting('search_words'),
                                                                 (brain.setting('search_builtin_words'))::boolean))::text,
                             ' | '), '')::tsquery
    FROM brain.lexical_terms(query) AS t WHERE t.searched
$$;
COMMENT ON FUNCTION brain.lexical_query IS
    'The query words the lexical leg looks for (brain.lexical_terms with searched), OR-ed: the rarest, until about lexical_max_rows (1000) memories match, never a word in more than lexical_max_term_share (2%) of memories.';

-- The lexemes of a query OR-ed into a tsquery (NULL when it has none).
CREATE OR REPLACE FUNCTION brain.query_lexemes(query text)
RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT nullif(string_agg(quote_literal(lexeme), ' | '), '')::tsquery
    FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')))) AS lexeme
$$;
COMMENT ON FUNCTION brain.query_lexemes IS
    'The query''s words, stemmed (english) and OR-ed: a memory matches the lexical leg if it shares any.';
