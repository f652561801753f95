-- The secret scanner's decodings: the ways a secret is written so that the rules
-- do not see it, each undone in a copy of the text that the scan also reads
-- (brain.scan_secrets, 001b-text-clean.sql).

-- The ways a secret is written so that the rules do not see it, each undone
-- in a copy of the text (brain._secret_variant): the stretches a pattern
-- finds, and what each stretch reads as.
--   unicode  characters outside ASCII: NFKC (full-width letters, ligatures,
--            no-break spaces), Cyrillic and Greek letters that look Latin,
--            and invisible characters (zero-width, soft hyphens, bidi) dropped
--   escapes  HTML entities (&#103; &#x67; &amp;), percent-encoding and
--            \xNN / \uNNNN escapes
--   blobs    base64 (and base64url) and hex runs that decode to text
--   spacing  a token written one character at a time, with spaces or line
--            breaks between the characters
--   joins    a token cut into pieces joined by line breaks (a JWT over
--            lines, a backslash continuation) or by string concatenation
--            ("ghp_ab" + "cd", "ab" "cd")
--   markup   token characters with markdown or HTML between them: backslash
--            escapes (ghp\_…), tags and comments (<b>, <span class=…>,
--            <!-- -->), emphasis and code marks (**, ~~, `), table cell
--            separators (| ghp_ab | cd |)
--   groups   a token written in groups of four, with dashes or spaces
--            between them (ghp_-AbCd-EfGh-…, AKIA ABCD EFGH …)
CREATE OR REPLACE FUNCTION brain._secret_stretch(how text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE how
        WHEN 'unicode' THEN '[^\u0001-\u007f]+'
        WHEN 'escapes' THEN '(?:&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\[0-3][0-7]{2})+'
        WHEN 'blobs' THEN '[A-Za-z0-9+/_-]{16,}={0,2}'
        WHEN 'spacing' THEN '(?<!\S)(?:\S\s{1,3}){7,}\S(?!\S)'
        WHEN 'joins' THEN '[A-Za-z0-9_./+=-]{6,}(?:(?:[ \t]*\\?\r?\n[ \t]*|["''`][ \t]*\+?[ \t]*["''`]|[ \t]+\+[ \t]+)[A-Za-z0-9_./+=-]{6,})+'
        WHEN 'markup' THEN '[A-Za-z0-9_./+=-]{2,}(?:(?:\\(?=[!-/:-@\[-`{-~])|</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?/?>|<!--(?:[^-]|-[^-])*-->|\*{1,3}|~~|`{1,3}|[ \t]*\|[ \t]*)+[A-Za-z0-9_./+=-]{2,})+'
        WHEN 'charcodes' THEN '(?:(?:[A-Za-z]+\.)?(?:[Nn]?[Cc][Hh][Rr][Ww$]?|[Nn]?[Cc][Hh][Aa][Rr]|fromCharCode)[ \t]*\([ \t]*(?:0[xX][0-9A-Fa-f]{1,4}|[0-9]{1,5})(?:[ \t]*,[ \t]*(?:0[xX][0-9A-Fa-f]{1,4}|[0-9]{1,5}))*[ \t]*\)[ \t]*(?:\|\||\+|&|\.|,)?[ \t]*)+|\[[ \t]*[0-9]{2,3}(?:[ \t]*,[ \t]*[0-9]{2,3}){7,}[ \t]*\]'
        WHEN 'hexdump' THEN '(?:(?:^|\n)[ \t]*(?:[0-9A-Fa-f]{4,8}:?[ \t]+)?(?:[0-9A-Fa-f]{2,4}[ \t]+){3,}[^\n]*)+|(?:0[xX][0-9A-Fa-f]{2}[ \t]*,[ \t]*){7,}0[xX][0-9A-Fa-f]{2}'
        WHEN 'base85' THEN '<~[!-uz \t\r\n]{5,}~>|[!-u]{20,}'
        WHEN 'groups' THEN '(?<![A-Za-z0-9_-])[A-Za-z0-9_]{1,12}(?:[- ][A-Za-z0-9]{4}){3,}(?:[- ][A-Za-z0-9]{1,3})?(?![A-Za-z0-9_-])'
    END
$$;

-- A run of up to 8 hexadecimal digits as an integer; NULL when it is none.
CREATE OR REPLACE FUNCTION brain._hex_int(h text)
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN h ~ '^[0-9A-Fa-f]{1,8}$' THEN ('x' || lpad(h, 8, '0'))::bit(32)::integer END
$$;

-- What a stretch reads as (NULL: it reads as itself).
CREATE OR REPLACE FUNCTION brain._secret_decode(x text, how text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    b bytea;
    d text;
    h text;
    cnt integer;
    bad integer;
BEGIN
    IF how = 'unicode' THEN
        IF current_setting('server_encoding') <> 'UTF8' THEN
            RETURN NULL;
        END IF;
        -- tag characters spell ASCII invisibly (U+E0020-E007E): read as the letters they stand for;
        -- combining marks over letters, variation selectors and the other invisible ones dropped
        IF x ~ '[\U000e0020-\U000e007e]' THEN
            x := ' ' || translate(x, (SELECT string_agg(chr(917536 + i), '' ORDER BY i) FROM generate_series(0, 94) AS i),
                              (SELECT string_agg(chr(32 + i), '' ORDER BY i) FROM generate_series(0, 94) AS i)) || ' ';
        END IF;
        d := translate(regexp_replace(normalize(x, NFKC),
                             '[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\U000e0000-\U000e007f\U000e0100-\U000e01ef]', '', 'g'),
                         'аАВсСеЕһНіІјЈКкМоОрРѕЅТуУхХԁԛԝԜӏӀүɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧονριϲακτυχ',
                         'aABcCeEhHiIjJKkMoOpPsSTyYxXdqwWlIygABEZHIKMNOPTYXovpicaktux');
        -- an ellipsis (… as ...), common in prose, hides no token
        RETURN CASE WHEN d !~ '^[.]+$' THEN d END;
    ELSIF how = 'escapes' THEN
        SELECT string_agg(CASE
                   WHEN m[1] ~ '^&#[0-9]' THEN CASE WHEN btrim(m[1], '&#;')::integer BETWEEN 32 AND 55295
                       THEN chr(btrim(m[1], '&#;')::integer) ELSE m[1] END
                   WHEN m[1] ~ '^&#[xX][0-9a-fA-F]{1,4};?$' THEN CASE
                       WHEN brain._hex_int(rtrim(substr(m[1], 4), ';')) BETWEEN 32 AND 55295
                       THEN chr(brain._hex_int(rtrim(substr(m[1], 4), ';'))) ELSE m[1] END
                   WHEN m[1] ~ '^(%|\\x)' AND brain._hex_int(right(m[1], 2)) BETWEEN 32 AND 126
                       THEN chr(brain._hex_int(right(m[1], 2)))
                   WHEN m[1] ~ '^\\u\{' AND brain._hex_int(btrim(substr(m[1], 3), '{}')) BETWEEN 32 AND 55295
                       THEN chr(brain._hex_int(btrim(substr(m[1], 3), '{}')))
                   WHEN m[1] ~ '^\\[0-3]' AND (substr(m[1], 2, 1)::integer * 64 + substr(m[1], 3, 1)::integer * 8
                                               + substr(m[1], 4, 1)::integer) BETWEEN 32 AND 126
                       THEN chr(substr(m[1], 2, 1)::integer * 64 + substr(m[1], 3, 1)::integer * 8 + substr(m[1], 4, 1)::integer)
                   WHEN m[1] ~ '^\\u' AND brain._hex_int(right(m[1], 4)) BETWEEN 32 AND 55295
                       THEN chr(brain._hex_int(right(m[1], 4)))
                   WHEN m[1] ~ '^&[A-Za-z]' THEN coalesce(jsonb_build_object(
                       'amp', '&', 'lt', '<', 'gt', '>', 'quot', '"', 'apos', '''', 'nbsp', ' ', 'sol', '/',
                       'lowbar', '_', 'period', '.', 'colon', ':', 'equals', '=', 'plus', '+', 'hyphen', '-',
                       'dash', '-', 'num', '#', 'excl', '!', 'dollar', '$', 'percnt', '%', 'commat', '@',
                       'tilde', '~', 'comma', ',', 'semi', ';', 'quest', '?', 'lpar', '(', 'rpar', ')',
                       'lsqb', '[', 'rsqb', ']', 'lcub', '{', 'rcub', '}', 'ast', '*', 'bsol', '\', 'Hat', '^',
                       'grave', '`', 'verbar', '|', 'vert', '|')
                       ->> rtrim(substr(m[1], 2), ';'), m[1])
                   ELSE m[1] END, '' ORDER BY n)
        INTO d
        FROM regexp_matches(x, '&#[0-9]{1,7};?|&#[xX][0-9a-fA-F]{1,6};?|&[A-Za-z]{2,8};|%[0-9A-Fa-f]{2}|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|\\u\{[0-9A-Fa-f]{1,6}\}|\\[0-3][0-7]{2}', 'g')
             WITH ORDINALITY AS t(m, n);
        RETURN nullif(d, x);
    ELSIF how = 'blobs' THEN
        -- text only: a run that decodes to binary (an image, a hash) reads as
        -- itself; so does a run without a digit (a long identifier: base64 of
        -- 12 characters or more of text holds a digit, as good as always)
        -- (without regular expressions: most texts carry a run like this, a path or
        -- an identifier, and a write runs more patterns than a backend keeps compiled)
        IF translate(x, '0123456789', '') = x THEN
            RETURN NULL;
        END IF;
        h := CASE WHEN left(x, 2) = '0x' THEN substr(x, 3) ELSE x END;
        IF h <> '' AND translate(h, '0123456789abcdefABCDEF', '') = '' AND length(h) % 2 = 0 THEN
            b := decode(h, 'hex');
        ELSIF rtrim(x, '=') <> '' AND translate(rtrim(x, '='), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', '') = ''
              AND brain._base32_text(x) IS NOT NULL THEN
            RETURN brain._base32_text(x);
        ELSIF translate(x, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', '') <> x THEN
            h := rtrim(translate(x, '-_', '+/'), '=');
            h := CASE length(h) % 4 WHEN 1 THEN left(h, -1) WHEN 2 THEN h || '==' WHEN 3 THEN h || '=' ELSE h END;
            b := decode(h, 'base64');
        ELSE
            RETURN NULL;
        END IF;
        d := encode(b, 'escape');
        -- (binary: a byte escaped as \ooo, or a control character)
        IF strpos(replace(d, '\\', ''), '\') > 0
           OR length(translate(d, E'\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f', '')) <> length(d) THEN
            RETURN NULL;
        END IF;
        RETURN replace(d, '\\', '\');
    ELSIF how = 'spacing' THEN
        RETURN regexp_replace(x, '\s', '', 'g');
    ELSIF how = 'joins' THEN
        -- pieces of a token hold a digit and a capital; words at the ends of
        -- two lines of prose do not
        IF x !~ '[0-9]' OR x !~ '[A-Z]' THEN
            RETURN NULL;
        END IF;
        RETURN regexp_replace(x, '[ \t]*\\?\r?\n[ \t]*|["''`][ \t]*\+?[ \t]*["''`]|[ \t]+\+[ \t]+', '', 'g');
    ELSIF how = 'markup' THEN
        -- escapes, tags and marks removed; the cells of a table row joined,
        -- every run of one to four neighbours (which cells hold the token's
        -- pieces is not said), one run a line. Words of prose and of
        -- tables hold no piece of letters and digits, or are short.
        IF x !~ '[A-Za-z][A-Za-z0-9_+/=.-]*[0-9]|[0-9][A-Za-z0-9_+/=.-]*[A-Za-z]' OR length(x) < 16 THEN
            RETURN NULL;
        END IF;
        d := regexp_replace(x, '\\(?=[!-/:-@\[-`{-~])|</?[A-Za-z][A-Za-z0-9]{0,15}(?:\s[^<>]{0,200})?/?>|<!--(?:[^-]|-[^-])*-->|\*{1,3}|~~|`{1,3}', '', 'g');
        IF d ~ '\|' THEN
            SELECT string_agg(array_to_string(c[i:i + w], ''), E'\n' ORDER BY i, w) INTO d
            FROM (SELECT regexp_split_to_array(d, '[ \t]*\|[ \t]*') AS c) AS cells,
                 generate_series(1, array_length(c, 1)) AS i, generate_series(0, 3) AS w
            WHERE i + w <= array_length(c, 1) AND length(array_to_string(c[i:i + w], '')) >= 16;
        END IF;
        RETURN d;
    ELSIF how = 'charcodes' THEN
        -- chr(103)||chr(104)…, CHAR(103,104,…), String.fromCharCode(…), [103, 104, …]
        SELECT string_agg(CASE WHEN n BETWEEN 32 AND 126 THEN chr(n) END, '' ORDER BY o), count(*),
               count(*) FILTER (WHERE n NOT BETWEEN 32 AND 126)
        INTO d, cnt, bad
        FROM (SELECT CASE WHEN m[1] ~* '^0x' THEN ('x' || lpad(substr(m[1], 3), 8, '0'))::bit(32)::integer
                          ELSE m[1]::integer END AS n, o
              FROM regexp_matches(regexp_replace(x, '[A-Za-z$.]+[ \t]*\(', '(', 'g'), '(0[xX][0-9A-Fa-f]{1,4}|[0-9]{1,5})', 'g')
                   WITH ORDINALITY AS r(m, o)) AS c;
        RETURN CASE WHEN cnt >= 8 AND bad = 0 THEN d END;
    ELSIF how = 'hexdump' THEN
        -- xxd, hexdump -C, od -x lines and 0x.. lists: the bytes, without offsets and the text column
        SELECT string_agg(hx, '' ORDER BY o) INTO h
        FROM (SELECT o, (SELECT string_agg(w, '' ORDER BY j)
                         FROM (SELECT w, j FROM regexp_split_to_table(
                                   regexp_replace(regexp_replace(line, '^[ \t]*[0-9A-Fa-f]{4,8}(?::[ \t]*|[ \t]{2,})', ''),
                                                  '\|.*$', ''), '[ \t,]+') WITH ORDINALITY AS t(w, j)) AS words
                         WHERE j < (SELECT min(k) FROM regexp_split_to_table(
                                   regexp_replace(regexp_replace(line, '^[ \t]*[0-9A-Fa-f]{4,8}(?::[ \t]*|[ \t]{2,})', ''),
                                                  '\|.*$', ''), '[ \t,]+') WITH ORDINALITY AS u(v, k)
                                     WHERE regexp_replace(v, '^0[xX]', '') !~ '^([0-9A-Fa-f]{2}){1,4}$' AND v <> '')
                                OR NOT EXISTS (SELECT FROM regexp_split_to_table(
                                   regexp_replace(regexp_replace(line, '^[ \t]*[0-9A-Fa-f]{4,8}(?::[ \t]*|[ \t]{2,})', ''),
                                                  '\|.*$', ''), '[ \t,]+') AS u(v)
                                     WHERE regexp_replace(v, '^0[xX]', '') !~ '^([0-9A-Fa-f]{2}){1,4}$' AND v <> '')) AS hx
              FROM regexp_split_to_table(regexp_replace(x, '0[xX]([0-9A-Fa-f]{2})', '\1', 'g'), '\n') WITH ORDINALITY AS l(line, o)) AS lines;
        h := regexp_replace(coalesce(h, ''), '[^0-9A-Fa-f]', '', 'g');
        IF length(h) < 16 OR length(h) % 2 = 1 THEN
            RETURN NULL;
        END IF;
        d := encode(decode(h, 'hex'), 'escape');
        IF d ~ '\\[0-7]{3}' OR d ~ '[\u0001-\u0008\u000b\u000c\u000e-\u001f\u007f]' THEN
            RETURN NULL;
        END IF;
        RETURN replace(d, '\\', '\');
    ELSIF how = 'base85' THEN
        RETURN brain._ascii85_text(x);
    ELSIF how = 'groups' THEN
        IF x !~ '[0-9]' THEN
            RETURN NULL;
        END IF;
        RETURN regexp_replace(x, '[- ]', '', 'g');
    END IF;
    RETURN NULL;
END
$$;

-- A base32 run (RFC 4648, A-Z and 2-7) as text; NULL when it is no base32 of text.
CREATE OR REPLACE FUNCTION brain._base32_text(x text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s text := rtrim(x, '=');
    acc bigint := 0;
    bits integer := 0;
    out text := '';
    v integer;
BEGIN
    IF s !~ '^[A-Z2-7]{16,}$' OR length(s) > 4096 OR length(s) % 8 IN (1, 3, 6) THEN
        RETURN NULL;
    END IF;
    FOR i IN 1 .. length(s) LOOP
        v := strpos('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', substr(s, i, 1)) - 1;
        acc := (acc << 5) | v;
        bits := bits + 5;
        IF bits >= 8 THEN
            bits := bits - 8;
            v := ((acc >> bits) & 255)::integer;
            IF v NOT BETWEEN 32 AND 126 AND v NOT IN (9, 10, 13) THEN
                RETURN NULL;
            END IF;
            out := out || chr(v);
            acc := acc & ((1::bigint << bits) - 1);
        END IF;
    END LOOP;
    RETURN out;
END
$$;

-- An Ascii85 run (btoa, Adobe's <~ ~>, Python's a85encode) as text; NULL when it is
-- no Ascii85 of text, or a run of base64's alphabet (read as base64).
CREATE OR REPLACE FUNCTION brain._ascii85_text(x text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- (a run of brain._secret_stretch('base85'): its only white space is these four)
    s text := translate(CASE WHEN left(x, 2) = '<~' AND right(x, 2) = '~>' THEN substr(x, 3, length(x) - 4)
                             WHEN left(x, 2) = '<~' THEN substr(x, 3)
                             WHEN right(x, 2) = '~>' THEN left(x, -2) ELSE x END, E' \t\r\n', '');
    out text := '';
    grp text;
    n bigint;
    pad integer;
    v integer;
BEGIN
    -- (Ascii85 of text is a sixth punctuation or more; an identifier, a path or a URL is not)
    -- (without regular expressions, as brain._secret_decode's base64)
    IF translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.-', '') = ''
       OR length(s) < 10 OR length(s) > 4096
       OR length(translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '')) * 8 < length(s) THEN
        RETURN NULL;
    END IF;
    s := replace(s, 'z', '!!!!!');
    IF translate(s, '!"#$%&''()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrstu', '') <> '' THEN
        RETURN NULL;
    END IF;
    pad := (5 - length(s) % 5) % 5;
    s := s || repeat('u', pad);
    FOR i IN 0 .. length(s) / 5 - 1 LOOP
        grp := substr(s, i * 5 + 1, 5);
        n := 0;
        FOR j IN 1 .. 5 LOOP
            n := n * 85 + ascii(substr(grp, j, 1)) - 33;
        END LOOP;
        IF n > 4294967295 THEN
            RETURN NULL;
        END IF;
        FOR j IN 0 .. CASE WHEN i = length(s) / 5 - 1 THEN 3 - pad ELSE 3 END LOOP
            v := ((n >> (24 - 8 * j)) & 255)::integer;
            IF v NOT BETWEEN 32 AND 126 AND v NOT IN (9, 10, 13) THEN
                RETURN NULL;
            END IF;
            out := out || chr(v);
        END LOOP;
    END LOOP;
    RETURN out;
END
$$;

-- A copy of a text with each stretch of one kind (brain._secret_stretch)
-- replaced by what it reads as, and the map back: segment i of the copy
-- starts at ds[i] (dl[i] characters) and comes from os[i] (ol[i]) of the
-- text; plain[i] when it is the text itself. Only the changed stretches and
-- 120 characters either side are copied (a key = value line and a token fit
-- in that): the rules then read a few lines, not the whole document again.
-- v is NULL when nothing changed.
CREATE OR REPLACE FUNCTION brain._secret_variant(t text, how text,
                                                 OUT v text, OUT os integer[], OUT ol integer[],
                                                 OUT ds integer[], OUT dl integer[], OUT plain boolean[])
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    re text := brain._secret_stretch(how);
    ctx constant integer := 120;
    stretches text[];
    gaps text[];
    decoded text[];
    x text;
    d text;
    o integer := 1;
    run_start integer := 1;   -- where the plain text since the last changed stretch starts
    seen_change boolean := false;
BEGIN
    -- (one pass each: the stretches, and the text between them)
    SELECT array_agg(m[1] ORDER BY n) INTO stretches FROM regexp_matches(t, re, 'g') WITH ORDINALITY AS s(m, n);
    IF stretches IS NULL THEN
        RETURN;
    END IF;
    SELECT array_agg(brain._secret_decode(s, how) ORDER BY n) INTO decoded
    FROM unnest(stretches) WITH ORDINALITY AS u(s, n);
    IF NOT EXISTS (SELECT FROM unnest(stretches, decoded) AS u(s, d) WHERE u.d <> u.s) THEN
        RETURN;
    END IF;
    gaps := regexp_split_to_array(t, re);
    v := ''; os := '{}'; ol := '{}'; ds := '{}'; dl := '{}'; plain := '{}';
    FOR i IN 1 .. array_length(gaps, 1) + 1 LOOP
        IF i <= array_length(gaps, 1) THEN
            o := o + length(gaps[i]);
        END IF;
        IF i <= array_length(stretches, 1) THEN
            x := stretches[i];
            d := decoded[i];
            IF d IS NULL OR d = x THEN
                o := o + length(x);
                CONTINUE;
            END IF;
        ELSE
            x := NULL;
        END IF;
        -- the plain text from run_start to o - 1: its end after a change, its start before one
        IF o > run_start THEN
            IF seen_change AND (x IS NULL OR o - run_start > 2 * ctx) THEN
                os := os || run_start; ol := ol || least(ctx, o - run_start); ds := ds || (length(v) + 1);
                dl := dl || least(ctx, o - run_start); plain := plain || true;
                v := v || substr(t, run_start, least(ctx, o - run_start));
                run_start := greatest(run_start + ctx, o - ctx);
                IF x IS NOT NULL THEN
                    os := os || run_start; ol := ol || 0; ds := ds || (length(v) + 1); dl := dl || 3;
                    plain := plain || false;
                    v := v || E'\n\u0001\n';
                END IF;
            ELSIF NOT seen_change THEN
                run_start := greatest(run_start, o - ctx);
            END IF;
            IF x IS NOT NULL AND o > run_start THEN
                os := os || run_start; ol := ol || (o - run_start); ds := ds || (length(v) + 1);
                dl := dl || (o - run_start); plain := plain || true;
                v := v || substr(t, run_start, o - run_start);
            END IF;
        END IF;
        EXIT WHEN x IS NULL;
        os := os || o; ol := ol || length(x); ds := ds || (length(v) + 1); dl := dl || length(d);
        plain := plain || false;
        v := v || d;
        seen_change := true;
        o := o + length(x);
        run_start := o;
    END LOOP;
END
$$;
