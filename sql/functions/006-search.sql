-- Retrieval: hybrid search (vector + ranked full text + trigram, fused by
-- reciprocal rank fusion and weighted; docs/ranking.md), skills, recent memories.

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
          FROM regexp_matches(coalesce(t, ''), '([A-Za-z0-9]+(?:[_:]+[A-Za-z0-9]+)+)', 'g') AS r(m)) AS w
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

-- Fills tsv and lexical_len on every write of the text, and keeps the
-- workspace's lexeme count in step when a memory's text changes in place.
CREATE OR REPLACE FUNCTION brain._memory_tsv()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.tsv := brain.memory_tsv(NEW.headline, NEW.body, NEW.context);
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
CREATE OR REPLACE FUNCTION brain.lexical_terms(query text)
RETURNS TABLE (lexeme text, docs bigint, idf double precision, searched boolean)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
-- Counted through an index, never a scan of the table, which would read every
-- memory's text vector (large ones from TOAST) to count a few of them; past
-- ten times the cap, through the word's posting list (below).
SET enable_seqscan = off
SET enable_indexscan = off
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    max_share double precision := (brain.setting('lexical_max_term_share'))::double precision;
    max_rows integer := (brain.setting('lexical_max_rows'))::integer;
    n_docs double precision;
    picked integer := 0;
    matched bigint := 0;
    found bigint;
    words text[] := '{}';
    counts bigint[] := '{}';
    shares double precision[] := '{}';
    capped text[] := '{}';
    w record;
    -- words for the same thing (brain.word_group)
    own jsonb := brain.setting('search_words');
    builtin boolean := (brain.setting('search_builtin_words'))::boolean;
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
    SELECT greatest(coalesce(sum(c.docs), 0), 1) INTO n_docs FROM brain.lexical_corpus c WHERE c.workspace_id = ws;
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
        IF searched THEN
            picked := picked + 1;
            matched := matched + w.docs;
        END IF;
        RETURN NEXT;
    END LOOP;
END
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
    PERFORM pg_advisory_xact_lock(hashtext('brain.analyze_lexemes'), ws::integer);
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

-- BM25 is scored inside brain.search, set-based (brain._search_bm25): this
-- per-memory function could not be inlined and cost a call per memory.
DROP FUNCTION IF EXISTS brain._bm25(tsvector, integer, tsquery[], tsquery[], double precision[], double precision[]);

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

-- Every setting of this workspace at once (brain.setting reads one): its
-- overrides over the defaults. Search reads some twenty, and each read of
-- one checks the caller's workspace again.
CREATE OR REPLACE FUNCTION brain._settings()
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT brain.setting_defaults()
           || coalesce((SELECT jsonb_object_agg(s.name, s.value) FROM brain.setting s
                        WHERE s.workspace_id = brain.current_workspace()), '{}')
$$;

-- The statement brain.search runs is built here, a fragment a function: the
-- filter every leg shares (brain._search_filter), the vector, lexical, trigram
-- and skill legs, and the fusion and ranking over them (brain._search_statement).
-- It has one parameter, $1, a brain.search_request, whose fields the fragments
-- name. tests/golden/search/ holds the statement each kind of call builds: a
-- change to a fragment shows there as a diff (tests/test_search_golden.py).

-- The BM25 score (docs/ranking.md) of the memories a subquery gives as
-- (memory_id, tsv, lexical_len): for each query word, idf x tf (k1 + 1) /
-- (tf + k1 (1 - b + b len / avg len)), with tf 1 when the headline or body
-- holds it, lexical_context_weight when only the context does; ($1).bm25 holds
-- k1, b, average length, context weight. One grouped join: a function call
-- per memory cost more than the scoring.
CREATE OR REPLACE FUNCTION brain._search_bm25(memories text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($b$
        SELECT m.memory_id,
               sum(u.idf * u.tf * (($1).bm25[1] + 1)
                   / (u.tf + ($1).bm25[1] * (1 - ($1).bm25[2] + ($1).bm25[2] * coalesce(m.lexical_len, 0) / ($1).bm25[3]))) AS bm25
        FROM (%s) AS m
        CROSS JOIN LATERAL (
            SELECT w.idf, CASE WHEN m.tsv @@ w.ab THEN 1 WHEN m.tsv @@ w.c THEN ($1).bm25[4] ELSE 0 END AS tf
            FROM unnest(($1).words_ab, ($1).words_c, ($1).words_idf) AS w(ab, c, idf)) AS u
        WHERE u.tf > 0
        GROUP BY m.memory_id $b$, memories)
$f$;

-- The vector leg: the `candidates` memories nearest the query's embedding in
-- the space that pass the filter, each with its rank r and similarity. kept:
-- the rows selective filters keep, counted up to brain._exact_rank_rows()
-- (NULL without such filters); n_docs: the workspace's memories. None
-- without an embedding (space NULL).
CREATE OR REPLACE FUNCTION brain._search_vector_leg(space brain.embedding_space, candidates integer,
                                                    kept integer, n_docs bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $f$
BEGIN
    IF space.space_id IS NULL THEN
        RETURN 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r, NULL::real AS sim,'
               ' NULL::double precision AS similarity WHERE false';
    END IF;
    -- The space's HNSW index (and an exact ranking of vectors it does not hold
    -- yet: brain._nearest_sql); iterative scans keep filtered searches from
    -- returning fewer rows than exist. The filters are a subquery per
    -- candidate, so the plan has no cheaper way than
    -- walking the HNSW index. Selective filters that keep few rows rank them
    -- exactly instead: their vectors looked up by key (the filters are not
    -- evaluated a second time).
    RETURN format($v$
        SELECT x.memory_id, x.r, x.similarity::real AS sim, x.similarity
        -- ranked over both parts of brain._nearest_sql; each part keeps its own plan
        FROM (SELECT k.memory_id, row_number() OVER (ORDER BY k.dist, k.memory_id) AS r,
                     1 - k.dist AS similarity
              FROM (%s) AS k
              WHERE 1 - k.dist >= ($1).vector_min_similarity) AS x
        WHERE x.r <= %s $v$,
        CASE WHEN kept < brain._exact_rank_rows() THEN format($x$
            (SELECT e.memory_id, e.embedding OPERATOR(public.<=>) ($1).embedding::public.vector(%1$s) AS dist
             FROM brain.embedding e
             WHERE e.workspace_id = ($1).workspace_id AND e.space_id = %2$s AND e.memory_id = ANY (($1).kept_ids)
             ORDER BY 2
             LIMIT %3$s) $x$, space.dims, space.space_id, candidates)
        -- A small workspace: every vector's distance (cheaper than the walk, and
        -- exact), then the filters in that order until `candidates` pass. Ranked
        -- after filtering instead, the filters' lookup ran for every memory.
        WHEN n_docs <= brain._exact_rank_rows() THEN format($x$
            (SELECT e.memory_id, e.dist
             FROM (SELECT e.workspace_id, e.memory_id,
                          e.embedding::public.vector(%1$s) OPERATOR(public.<=>) ($1).embedding::public.vector(%1$s) AS dist
                   FROM brain.embedding e
                   WHERE e.workspace_id = ($1).workspace_id AND e.space_id = %2$s
                   ORDER BY 3 OFFSET 0) AS e
             WHERE (SELECT %3$s FROM brain.memory m
                    WHERE m.workspace_id = e.workspace_id AND m.memory_id = e.memory_id)
             ORDER BY e.dist
             LIMIT %4$s) $x$, space.dims, space.space_id, brain._search_filter(), candidates)
        ELSE
        brain._nearest_sql(space, format('($1).embedding::public.vector(%s)', space.dims), '',
            'e.workspace_id = ($1).workspace_id AND '
            || format('(SELECT %s FROM brain.memory m WHERE m.workspace_id = e.workspace_id'
                      ' AND m.memory_id = e.memory_id)', brain._search_filter()),
            candidates) END,
        candidates);
END
$f$;

-- The lexical leg: BM25 over the memories holding a searched word (at most
-- max_rows of them: when even the rarest word is in more, those first found),
-- the best `candidates`, each with its rank r. The memories are read in a
-- CTE, which is planned for all its rows and read only as far as the LIMIT:
-- planned under the LIMIT, a filter the planner thought the word's memories
-- often pass made reading the memories in an index's order (memory_active,
-- memory_created_at, memory_last_accessed) until enough passed look cheaper
-- than the word's posting list, and where none passed that read every memory.
CREATE OR REPLACE FUNCTION brain._search_lexical_leg(candidates integer, max_rows integer)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($l$
            SELECT x.memory_id, row_number() OVER (ORDER BY x.bm25 DESC, x.memory_id DESC) AS r, x.bm25
            FROM (%1$s) AS x
            ORDER BY x.bm25 DESC, x.memory_id DESC
            LIMIT %2$s $l$,
            brain._search_bm25(format(
                -- (tsv || '') reads a memory's vector (from TOAST) once, not once per word
                'WITH held AS MATERIALIZED (SELECT m.memory_id, m.tsv || ''''::tsvector AS tsv, m.lexical_len'
                ' FROM brain.memory m WHERE m.tsv @@ ($1).tsq AND %s)'
                ' SELECT h.memory_id, h.tsv, h.lexical_len FROM held h LIMIT %s',
                brain._search_filter(), max_rows)),
            candidates)
$f$;

-- The trigram leg, for short queries: typos, identifiers, headline fragments.
-- A fragment or a typo of a common word ("ser", "paymnts servce") matches the
-- headlines of thousands of memories, and each is read and its similarity
-- computed again (100-900 ms at 100k): the leg ranks at most three times
-- `candidates` of them, those the trigram index gives first. In a CTE,
-- planned for all its rows and read only as far as the LIMIT (as the lexical
-- leg's): under the LIMIT, reading the table in an index's order looked cheaper.
CREATE OR REPLACE FUNCTION brain._search_fuzzy_leg(candidates integer)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($t$
            WITH near AS MATERIALIZED (
                SELECT m.memory_id, m.headline FROM brain.memory m
                WHERE ($1).query OPERATOR(public.<%%) m.headline AND %1$s
                  -- typos and fragments matter when the words found little
                  AND (SELECT count(*) FROM lex) < 5)
            SELECT h.memory_id,
                   row_number() OVER (ORDER BY public.word_similarity(($1).query, h.headline) DESC, h.memory_id DESC) AS r
            FROM (SELECT n.memory_id, n.headline FROM near n LIMIT %3$s) AS h
            ORDER BY public.word_similarity(($1).query, h.headline) DESC, h.memory_id DESC
            LIMIT %2$s $t$, brain._search_filter(), candidates, 3 * candidates)
$f$;

-- The skills whose trigger keywords the query names (and whose projects, if
-- any, hold the search's project), pinned and important first.
CREATE OR REPLACE FUNCTION brain._search_skills_leg()
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $f$
    SELECT format($s$
            SELECT m.memory_id, m.skill_trigger->>'name' AS skill,
                   row_number() OVER (ORDER BY m.pinned DESC, m.importance DESC, m.memory_id) AS r
            FROM brain.memory m
            WHERE m.skill_trigger IS NOT NULL AND %1$s
              AND m.state = 'active'
              AND EXISTS (SELECT FROM jsonb_array_elements_text(
                              coalesce(m.skill_trigger->'keywords', '[]')) AS kw
                          WHERE kw <> '' AND strpos(lower(($1).query), lower(kw)) > 0)
              AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
                   OR (($1).project IS NOT NULL AND m.skill_trigger->'projects' ? ($1).project))
            ORDER BY r
            LIMIT ($1).skill_trigger_max $s$, brain._search_filter())
$f$;

-- The whole statement of a search: the legs that run (vector with an
-- embedding, lexical with words to look for, trigram when fuzzy, skills when
-- the workspace has some), fused by reciprocal rank, scored, ranked, paged,
-- with neighbours on request. req: the request it runs with (its embedding
-- and words say which legs run); space: the search's embedding space (NULL
-- fields without an embedding); cfg: the workspace's settings
-- (brain._settings); kept, n_docs: as brain._search_vector_leg.
CREATE OR REPLACE FUNCTION brain._search_statement(req brain.search_request, space brain.embedding_space,
                                                   cfg jsonb, fuzzy boolean, skills boolean,
                                                   kept integer, n_docs bigint)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $f$
DECLARE
    -- A fixed pool, whatever max_results: the first k results do not depend on it.
    candidates integer := greatest((cfg->'search_candidates')::integer, 1);
    vector_sql text;
    lexical_sql text := CASE WHEN req.tsq IS NOT NULL
                             THEN brain._search_lexical_leg(candidates, (cfg->'lexical_max_rows')::integer)
                             ELSE 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r,'
                                  ' NULL::double precision AS bm25 WHERE false' END;
    fuzzy_sql text := CASE WHEN fuzzy THEN brain._search_fuzzy_leg(candidates)
                           ELSE 'SELECT NULL::bigint AS memory_id, NULL::bigint AS r WHERE false' END;
    skills_sql text := CASE WHEN skills THEN brain._search_skills_leg()
                            ELSE 'SELECT NULL::bigint AS memory_id, NULL::text AS skill, NULL::bigint AS r'
                                 ' WHERE false' END;
    sim_sql text := 'NULL::double precision';
BEGIN
    -- Without an embedding there is no space: no vector leg, no similarity, and
    -- conflicts judged by headline trigrams (below).
    IF req.embedding IS NULL THEN
        space := NULL;
    ELSE
        -- The similarity of every fused candidate, found by the vector leg or not.
        sim_sql := format('(SELECT 1 - (e.embedding::public.vector(%1$s) OPERATOR(public.<=>) ($1).embedding::public.vector(%1$s))'
                          ' FROM brain.embedding e WHERE e.workspace_id = ($1).workspace_id AND e.space_id = %2$s'
                          ' AND e.memory_id = f.memory_id)', space.dims, space.space_id);
    END IF;
    vector_sql := brain._search_vector_leg(space, candidates, kept, n_docs);
    RETURN format($q$
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
                          -- The floor answers "nothing relevant": when no candidate reaches
                          -- it, no hit; when one does, the ranking as it is (it never trims).
                          AND EXISTS (SELECT FROM scored b WHERE b.verdict >= ($1).min_relevance)) AS sc
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
            FROM window_ w
            JOIN brain.memory q ON q.workspace_id = ($1).workspace_id AND q.memory_id = w.memory_id
            CROSS JOIN LATERAL brain._turn_answer(($1).workspace_id, w.memory_id) AS a
            WHERE w.skill IS NULL
              AND q.origin = 'observed' AND q.metadata->>'role' = 'user' AND q.metadata ? 'turn'
              AND (%13$s OR brain._only_asks(regexp_replace(coalesce(nullif(q.body, ''), q.headline), '^User: ', '')))
              AND a.answer_id <> w.memory_id
              AND EXISTS (SELECT FROM brain.memory m WHERE m.memory_id = a.answer_id AND %11$s)
        ),
        listed AS (
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
        -- the results' active authored memories, read once: what a newer one may contradict
        authored AS MATERIALIZED (
            SELECT n.memory_id, n.kind, n.project, n.created_at, n.headline, n.body, l.place
            FROM listed l JOIN brain.memory n ON n.workspace_id = ($1).workspace_id AND n.memory_id = l.memory_id
            WHERE n.state = 'active' AND n.origin IN ('explicit', 'overlay')
        ),
        judged AS MATERIALIZED (
            SELECT l.*,
                   CASE WHEN m.state = 'superseded' THEN brain.current_version(m.memory_id) ELSE m.memory_id END AS current_id,
                   -- a newer authored memory among the results that may contradict this
                   -- one, the nearest: of an authored memory, one of the same kind and
                   -- project, as near as the space's related similarity (headline trigrams
                   -- without a query vector, 0.5) and differing in distinguishing terms
                   -- only; of a captured turn or text (observed, artifact), one of its
                   -- project at half that similarity, differing so; of a superseded
                   -- memory, its current version
                   CASE WHEN m.state = 'superseded' THEN (
                            SELECT n.memory_id FROM authored n WHERE n.memory_id = brain.current_version(m.memory_id))
                        WHEN m.state = 'active' THEN (
                   SELECT n.memory_id
                   FROM (SELECT n.*, %10$s AS near
                         FROM (SELECT n.* FROM authored n
                               WHERE n.memory_id <> m.memory_id AND n.project = m.project
                                 AND n.created_at > m.created_at
                                 AND (n.kind = m.kind OR m.origin NOT IN ('explicit', 'overlay'))
                               OFFSET 0) AS n) AS n  -- the cheap tests first, for the few pairs they leave
                   WHERE n.near >= CASE WHEN m.origin IN ('explicit', 'overlay') THEN %12$s ELSE %12$s / 2 END
                     AND brain._distinct_facts(m.headline || E'\n' || m.body, n.headline || E'\n' || n.body)
                   ORDER BY n.near DESC, n.created_at DESC, n.memory_id DESC
                   LIMIT 1) END AS newer
            FROM listed l
            JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = l.memory_id
        ),
        -- what each older memory leads to: the end of its chain of newer ones among the
        -- results (20 -> 22 -> 24: 24), the current one
        chained (memory_id, target, depth) AS (
            SELECT j.memory_id, j.newer, 1 FROM judged j WHERE j.newer IS NOT NULL
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
                   p.newest, p.current_id
            FROM page p
            UNION ALL
            SELECT n.memory_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, p.memory_id, p.hit,
                   abs(n.position - h.position), n.position, 1, NULL, NULL
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
               rk.relevance::real, m.source_system, m.source_ref, m.metadata, m.thread, m.position, rk.neighbour_of,
               rk.newest, rk.verdict::real
        FROM chosen rk
        JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = rk.memory_id
        LEFT JOIN vec v ON v.memory_id = rk.memory_id
        ORDER BY rk.hit, rk.neighbour_of IS NOT NULL, rk.pos, rk.memory_id $q$,
        vector_sql, lexical_sql, fuzzy_sql, skills_sql, sim_sql, (cfg->'search_max_per_thread')::integer,
        brain._search_bm25('SELECT m.memory_id, m.tsv || ''''::tsvector AS tsv, m.lexical_len'
                         ' FROM fused f JOIN brain.memory m ON m.workspace_id = ($1).workspace_id AND m.memory_id = f.memory_id'
                         ' WHERE f.lexical_rank IS NULL AND ($1).bm25[5] > 0 OFFSET 0'),
        (cfg->'search_thread_decay')::double precision,
        -- a question about what the assistant said weighs its replies as a person's turns
        CASE WHEN brain._asks_replies(req.query) THEN 1 ELSE (cfg->'assistant_turn_weight')::double precision END,
        CASE WHEN space.space_id IS NULL THEN 'public.similarity(m.headline, n.headline)'
             ELSE format('(SELECT 1 - (a.embedding::public.vector(%1$s) OPERATOR(public.<=>) b.embedding::public.vector(%1$s))'
                         ' FROM brain.embedding a, brain.embedding b'
                         ' WHERE a.workspace_id = ($1).workspace_id AND a.space_id = %2$s AND a.memory_id = m.memory_id'
                         ' AND b.workspace_id = ($1).workspace_id AND b.space_id = %2$s AND b.memory_id = n.memory_id)',
                         space.dims, space.space_id) END,
        brain._search_filter(),
        CASE WHEN space.space_id IS NULL THEN 0.5 ELSE space.related END,
        CASE WHEN brain._asks_replies(req.query) THEN 'true' ELSE 'false' END);
END
$f$;

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
    -- The query's words as the lexical leg weighs them (brain.lexical_terms).
    words_idf double precision[];
    words_lexemes text[];  -- the query's words some memory holds
    words_searched boolean[];
    own_words jsonb := cfg->'search_words';
    builtin_words boolean := (cfg->>'search_builtin_words')::boolean;
    -- k1, b, average memory length, context weight, the query's idf sum
    bm25 double precision[];
    idf_sum double precision;
    left_out boolean;  -- a word of the query was left out for being common
    -- vector center and slope (the space's), lexical center and slope, hybrid weights (brain.relevance)
    calibration double precision[];
    floor double precision := coalesce(min_relevance, (cfg->'min_relevance')::double precision);
    fuzzy boolean;
    skills boolean;
    -- Without selective filters the statement is the same for every search of a shape.
    unfiltered boolean := kinds IS NULL AND categories IS NULL AND tags IS NULL AND people IS NULL
                        AND created_after IS NULL AND created_before IS NULL AND as_of IS NULL
                        AND source_system IS NULL AND source_ref IS NULL;
    statement text;
    kept integer;  -- rows the selective filters keep, counted up to brain._exact_rank_rows()
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
    IF q <> '' THEN
        SELECT array_agg(t.lexeme), array_agg(t.idf), array_agg(t.searched)
        INTO words_lexemes, words_idf, words_searched
        FROM brain.lexical_terms(query) AS t;
        -- each word with the words for the same thing (brain.word_groups, inlined for a
        -- variable's array)
        SELECT nullif(string_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]))::text, ' | ')
                          FILTER (WHERE t.searched), '')::tsquery,
               array_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]), 'AB') ORDER BY t.n),
               array_agg(brain.word_tsquery(coalesce(t.grp, ARRAY[t.lexeme]), 'C') ORDER BY t.n),
               sum(t.idf), coalesce(bool_or(NOT t.searched), false)
        INTO req.tsq, req.words_ab, req.words_c, idf_sum, left_out
        FROM (SELECT w.*, g.grp
              FROM unnest(words_lexemes, words_idf, words_searched) WITH ORDINALITY AS w(lexeme, idf, searched, n)
              LEFT JOIN brain.word_groups(CASE WHEN own_words IS DISTINCT FROM '{}'::jsonb
                                                    OR builtin_words AND EXISTS (
                                                        SELECT FROM brain.builtin_search_words() AS b
                                                        WHERE b.lexeme = ANY (words_lexemes)
                                                           OR b.means_lexeme = ANY (words_lexemes))
                                               THEN words_lexemes END, own_words, builtin_words) AS g USING (lexeme)
              ORDER BY w.n) AS t;
    END IF;
    bm25[1] := (cfg->'lexical_k1')::double precision;
    bm25[2] := (cfg->'lexical_b')::double precision;
    SELECT coalesce(sum(c.lexemes), 0), coalesce(sum(c.docs), 0) INTO n_lexemes, n_docs
    FROM brain.lexical_corpus c WHERE c.workspace_id = ws;
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
        IF NOT unfiltered THEN
            -- The plan by the filters' selectivity: the rows they keep, read up to
            -- brain._exact_rank_rows(). Fewer are ranked exactly (brain._search_vector_leg);
            -- more walk the index, with a tuple budget that lets the walk reach
            -- `candidates` of them (about candidates x space / kept tuples).
            EXECUTE format('SELECT count(*), array_agg(x.memory_id)'
                           ' FROM (SELECT m.memory_id FROM brain.memory m WHERE %s LIMIT %s) AS x',
                           brain._search_filter(), brain._exact_rank_rows())
            INTO kept, req.kept_ids
            USING req;
            PERFORM set_config('hnsw.max_scan_tuples', greatest(20000, ceil(2.0 * candidates
                * (SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.oid = 'brain.embedding'::regclass)
                / brain._exact_rank_rows()))::bigint::text, true);
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
    statement := brain._search_statement(req, space, cfg, fuzzy, skills, kept, n_docs);
    -- Every leg reads memories through an index (the words', the trigrams', the
    -- vectors', the keys). Under a LIMIT, a filter the planner thinks the word's
    -- memories often pass made reading the table in order until enough passed look
    -- cheaper, and when none passed, that read every memory: a kind filter and a
    -- word only other kinds hold took 625 ms at 1M memories. (An index's order
    -- looks as cheap for the same reason: the lexical leg's CTE.)
    PERFORM set_config('enable_seqscan', 'off', true);
    -- Planned on every call, for the request's values. Never a prepared statement:
    -- those belong to the caller's session, which may replace one under the name this
    -- function would run, and this function runs as the owner (docs/security.md).
    RETURN QUERY EXECUTE statement USING req;
END
$$;
COMMENT ON FUNCTION brain.search IS
    'Hybrid search: HNSW vector leg (when query_embedding is given), ranked full-text leg, trigram leg for short queries; fused by reciprocal rank fusion and weighted by decay, rating, pin, importance and overlay origin (docs/ranking.md); decay lowers a fact''s rank and never hides it (dormant facts are searched; include_dormant is accepted and has no effect). Matching skills come first, marked via_skill_trigger. A captured prompt that only asks gives its place to the reply that answers it (the prompt follows, neighbour_of the reply); an older memory, captured turn or superseded memory that a newer authored one among the results may contradict (newer_related: the current end of that chain) comes right after it; score is the ranking''s figure and never rises down the list (relevance is the evidence). The floor''s verdict of a query that says something before it asks counts the unknown words of its question only (brain._asked_text). Filters: kinds, categories, project (plus global), tags and people (all given), created range, states, as_of, provenance (source_system; source_ref exact, or every ref under it when it ends in /). Headlines and previews only: bodies come from brain.recall.';

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

-- Not inlined on purpose (the SET clause): as a function call it counts as
-- expensive, so a query evaluates it only for the rows left after its LIMIT.
CREATE OR REPLACE FUNCTION brain.preview(body text, max_chars integer DEFAULT 160)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(t) <= max_chars THEN t
                ELSE rtrim(left(t, max_chars - 1)) || '…' END
    FROM (SELECT brain.trim_space(regexp_replace(coalesce(body, ''), '\s+', ' ', 'g')) AS t) AS x
$$;
COMMENT ON FUNCTION brain.preview IS 'The start of a body on one line, at most max_chars characters.';

-- The passage of a body that matched a query: around the query's word that
-- the body holds fewest times (a number that tells one log line from the
-- next, rather than the word every line has; ties: the longer word), taken
-- as the query's stems, the tokens it names verbatim (brain.exact_tokens)
-- and its words with digits, each found at a word's start; the start of the
-- body when none is found (a search by vector alone). At most max_chars
-- characters on one line, with … where the body goes on; the words are the
-- body's own, numbers and all. Not inlined (the SET clause): search
-- computes it for the rows of its page only.
CREATE OR REPLACE FUNCTION brain._match_window(body text, query text, max_chars integer)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- the body on one line, and a copy with every character but letters and digits a
    -- space, each computed once (as one SQL query of subqueries the planner copied these
    -- expressions into every use: 60 ms for a 16k body, 15 ms for 4k)
    t text := brain.trim_space(regexp_replace(coalesce(body, ''), '\s+', ' ', 'g'));
    spaced text;
    hit integer;
    s0 integer;
    s integer;
BEGIN
    IF length(t) <= max_chars THEN
        RETURN brain.preview(t, max_chars);
    END IF;
    spaced := ' ' || regexp_replace(lower(t), '[^[:alnum:]]', ' ', 'g');
    -- words as ' word' in the spaced copy: the one the body holds fewest times
    SELECT strpos(spaced, ' ' || k.w) INTO hit
    FROM (SELECT k.w, (length(spaced) - length(replace(spaced, ' ' || k.w, ''))) / length(' ' || k.w) AS times
          FROM (SELECT DISTINCT regexp_replace(k.tok, '[^[:alnum:]]', ' ', 'g') AS w
                FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, coalesce(query, '')))
                            || brain.exact_tokens(query)
                            || ARRAY(SELECT lower(d[1])
                                     FROM regexp_matches(coalesce(query, ''), '([[:alnum:]]*[0-9][[:alnum:]]*)', 'g') AS d)
                      ) AS k(tok)) AS k
          WHERE k.w ~ '[[:alnum:]]') AS k
    WHERE k.times > 0
    ORDER BY k.times, length(k.w) DESC, k.w
    LIMIT 1;
    IF coalesce(hit, 1) <= 1 THEN
        RETURN brain.preview(t, max_chars);
    END IF;
    -- from a word's start a little before the match, the window full where the body allows
    s0 := greatest(1, least(hit - 40, length(t) - max_chars + 3));
    s := CASE WHEN s0 <= 1 THEN 1
              WHEN substr(t, s0 - 1, 1) = ' ' THEN s0
              ELSE s0 + coalesce(nullif(strpos(substr(t, s0, 24), ' '), 0), 0) END;
    RETURN CASE WHEN s > 1 THEN '…' ELSE '' END
           || CASE WHEN s + max_chars - 2 <= length(t) THEN rtrim(substr(t, s, max_chars - 2)) || '…'
                   ELSE substr(t, s) END;
END
$$;
-- A body short enough to show whole, or a search without words, costs no more
-- than the start of the body.
CREATE OR REPLACE FUNCTION brain.match_preview(body text, query text, max_chars integer DEFAULT 160)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN length(coalesce(body, '')) <= max_chars OR brain.trim_space(coalesce(query, '')) = ''
                THEN brain.preview(body, max_chars)
                ELSE brain._match_window(body, query, max_chars) END
$$;
COMMENT ON FUNCTION brain.match_preview IS
    'The passage of a body around what a query matched (the query''s word the body holds fewest times: a number before a word every line has), at most max_chars characters on one line with … where the body goes on; the start of the body when nothing matched. Search''s preview.';

-- The memory a stored one may contradict or replace (docs/ranking.md,
-- "Conflicts"): the nearest active memory of the same kind and project,
-- other than itself, at least the active space's `related` similarity, whose
-- text differs from it in distinguishing terms only (each has a term the
-- other lacks: "Node.js runtime is version 20" and "... version 22"). NULL
-- when there is none (or no vector yet). Never refuses or changes
-- anything: the caller decides whether the new memory supersedes it.
CREATE OR REPLACE FUNCTION brain.related_memory(memory_id bigint)
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, public, pg_temp
AS $$
DECLARE
    ws bigint := brain.current_workspace();
    space brain.embedding_space := brain.active_embedding_space();
    mem brain.memory;
    vec public.vector;
    near record;
    other brain.memory;
    mine text[];
    theirs text[];
BEGIN
    SELECT * INTO mem FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = related_memory.memory_id;
    IF mem.memory_id IS NULL OR space.space_id IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT e.embedding INTO vec FROM brain.embedding e
    WHERE e.workspace_id = ws AND e.space_id = space.space_id AND e.memory_id = mem.memory_id;
    IF vec IS NULL THEN
        RETURN NULL;
    END IF;
    mine := brain.distinguishing_terms(mem.headline || E'\n' || mem.body);
    FOR near IN
        SELECT x.memory_id, x.similarity
        FROM brain._near_write(space, vec, mem.kind, mem.project, mem.memory_id, space.related) AS x
        WHERE x.similarity >= space.related
        ORDER BY x.similarity DESC, x.memory_id
        LIMIT 5
    LOOP
        SELECT * INTO other FROM brain.memory m WHERE m.workspace_id = ws AND m.memory_id = near.memory_id;
        -- (authored memories only, as the write's related policy: a captured turn or text is
        -- a record of what was said, never one a write replaces)
        IF other.origin IN ('explicit', 'overlay')
           AND brain._distinct_facts(other.headline || E'\n' || other.body, mem.headline || E'\n' || mem.body) THEN
            theirs := brain.distinguishing_terms(other.headline || E'\n' || other.body);
            RETURN jsonb_build_object(
                'id', other.memory_id, 'headline', other.headline, 'similarity', round(near.similarity::numeric, 3),
                'created_at', other.created_at,
                'terms', jsonb_build_object(
                    'this', to_jsonb(ARRAY(SELECT t FROM unnest(mine) AS t WHERE NOT t = ANY (theirs))),
                    'that', to_jsonb(ARRAY(SELECT t FROM unnest(theirs) AS t WHERE NOT t = ANY (mine)))),
                'hint', format('#%s may say the same of another value. If #%s replaces it: brain supersede %s ... '
                               '(SQL: brain.supersede(old_id => %s, ...)).',
                               other.memory_id, mem.memory_id, other.memory_id, other.memory_id));
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION brain.related_memory IS
    'The memory a stored one may contradict or replace: the nearest active memory of its kind and project, at least the space''s related similarity, differing in distinguishing terms only (a number, a version, a name). {id, headline, similarity, created_at, terms: {this, that}, hint}; NULL when none. Reported by writes (Brain.remember, brain remember, the MCP remember tool); never refuses.';

CREATE OR REPLACE FUNCTION brain.load_skill(name text, project text DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found_id bigint;
BEGIN
    SELECT m.memory_id INTO found_id
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger->>'name' = load_skill.name
      AND (coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR (load_skill.project IS NOT NULL AND m.skill_trigger->'projects' ? load_skill.project));
    IF found_id IS NULL THEN
        PERFORM brain._raise('BR010', 'No active skill of that name here.',
            jsonb_build_object('fields', jsonb_build_array('name', 'project')),
            'Skills scoped to projects load only from those projects; superseded skills never load.');
    END IF;
    RETURN brain.recall(found_id);
END
$$;
COMMENT ON FUNCTION brain.load_skill IS
    'The active skill with this name (global, or scoped to the given project), recalled in full.';

CREATE OR REPLACE FUNCTION brain.list_recent(
    kinds text[] DEFAULT NULL,
    project text DEFAULT NULL,
    max_results integer DEFAULT 20,
    include_superseded boolean DEFAULT false,
    include_archived boolean DEFAULT false
)
RETURNS SETOF brain.memory_brief
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.memory_id, m.kind, m.category, m.project, m.headline, brain.preview(m.body), m.state,
           m.pinned, m.created_at
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace()
      AND (kinds IS NULL OR m.kind = ANY (kinds))
      AND (list_recent.project IS NULL OR m.project IN (list_recent.project, ''))
      AND (m.state = 'active' OR (include_superseded AND m.state = 'superseded')
           OR (include_archived AND m.state = 'archived'))
    ORDER BY m.created_at DESC, m.memory_id DESC
    LIMIT greatest(1, least(max_results, 500))
$$;
COMMENT ON FUNCTION brain.list_recent IS 'The newest memories, headlines and previews, filtered like search.';

CREATE OR REPLACE FUNCTION brain.list_skills(project text DEFAULT NULL)
RETURNS TABLE (name text, id bigint, headline text, keywords jsonb, projects jsonb, always_on boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT m.skill_trigger->>'name', m.memory_id, m.headline,
           coalesce(m.skill_trigger->'keywords', '[]'), coalesce(m.skill_trigger->'projects', '[]'),
           coalesce((m.skill_trigger->>'always_on')::boolean, false)
    FROM brain.memory m
    WHERE m.workspace_id = brain.current_workspace() AND m.state = 'active'
      AND m.skill_trigger IS NOT NULL
      AND (list_skills.project IS NULL
           OR coalesce(jsonb_array_length(m.skill_trigger->'projects'), 0) = 0
           OR m.skill_trigger->'projects' ? list_skills.project)
    ORDER BY 1
$$;
COMMENT ON FUNCTION brain.list_skills IS
    'Active skills (global, plus those scoped to the given project; all when project is NULL).';
