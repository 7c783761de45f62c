// unicode.c: UTF-8 decoding and encoding, and category look-up by binary
// search over the runs of unicode-data.c (about 4,000 of them: 12 steps).

#include "unicode.h"

enum run_ucat run_unicode_category(uint32_t cp) {
    if (cp > 0x10FFFF) {
        return RUN_UCAT_CN;
    }
    // the last run whose first code point is <= cp (the first run starts at 0)
    size_t lo = 0, hi = run_unicode_n_runs;
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((run_unicode_runs[mid] >> 5) <= cp) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return (enum run_ucat) (run_unicode_runs[lo] & 31);
}

bool run_unicode_is_space(uint32_t cp) {
    if (cp < 0x80) {
        return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20;
    }
    if (cp == 0x85) {
        return true;
    }
    const enum run_ucat c = run_unicode_category(cp);
    return c == RUN_UCAT_ZS || c == RUN_UCAT_ZL || c == RUN_UCAT_ZP;
}

size_t run_utf8_decode(const char * s, size_t n, uint32_t * cp) {
    const uint8_t b0 = (uint8_t) s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2; v = b0 & 0x1F; min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3; v = b0 & 0x0F; min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4; v = b0 & 0x07; min = 0x10000;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (len > n) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < len; i++) {
        const uint8_t b = (uint8_t) s[i];
        if ((b & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        v = (v << 6) | (b & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = v;
    return len;
}

size_t run_utf8_encode(uint32_t cp, char * out) {
    if (cp < 0x80) {
        out[0] = (char) cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char) (0xC0 | (cp >> 6));
        out[1] = (char) (0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char) (0xE0 | (cp >> 12));
        out[1] = (char) (0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char) (0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char) (0xF0 | (cp >> 18));
    out[1] = (char) (0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char) (0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char) (0x80 | (cp & 0x3F));
    return 4;
}

// A sequence cut short is held back only while it can still become valid:
// a lead byte followed by fewer continuation bytes than it announces.
size_t run_utf8_complete_prefix(const char * s, size_t n) {
    size_t start = n;
    // at most 3 continuation bytes can belong to an unfinished character
    for (size_t back = 1; back <= 4 && back <= n; back++) {
        const uint8_t b = (uint8_t) s[n - back];
        if ((b & 0xC0) != 0x80) {
            start = n - back;
            break;
        }
    }
    if (start == n) {
        return n;
    }
    const uint8_t b0 = (uint8_t) s[start];
    const size_t need = (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 1;
    return n - start < need ? start : n;
}
