// Small, bounds-checked JSON helpers over json-c, shared by the checkpoint
// readers (config.cpp, safetensors.cpp). Header-only and internal.
#pragma once

#include "util/json_dup.h"
#include "util/read_file.h"

#include <json-c/json.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bosch_torch {
namespace jsonu {

struct JsonPut {
    void operator()(json_object *o) const { json_object_put(o); }
};
using JsonPtr = std::unique_ptr<json_object, JsonPut>;

// Parses exactly one JSON value from buf[0..len); only whitespace may follow
// it. Embedded NUL bytes and a key given twice in one object (json-c would
// keep the last value) are refused. Returns "" or a message.
inline std::string parse(const char *buf, size_t len, JsonPtr &out) {
    out.reset();
    if (len > (size_t)INT32_MAX - 1)
        return "JSON text too large";
    if (len > 0 && std::memchr(buf, '\0', len) != nullptr)
        return "JSON text contains a NUL byte";
    std::string copy(buf, len); // NUL-terminated; the NUL ends numbers at the end of input
    json_tokener *tok = json_tokener_new_ex(64);
    if (!tok)
        return "out of memory";
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *obj = json_tokener_parse_ex(tok, copy.c_str(), (int)len + 1);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (jerr != json_tokener_success || !obj) {
        if (obj)
            json_object_put(obj);
        if (jerr == json_tokener_continue || jerr == json_tokener_success)
            return "invalid JSON: unexpected end of input";
        return std::string("invalid JSON: ") + json_tokener_error_desc(jerr) + " (near byte " +
               std::to_string(end) + ")";
    }
    out.reset(obj);
    for (size_t i = end; i < len; i++) {
        char c = copy[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            out.reset();
            return "invalid JSON: trailing characters after byte " + std::to_string(end);
        }
    }
    util_json_dup dup;
    int twice = util_json_dup_find(buf, len, &dup);
    if (twice) {
        out.reset();
        if (twice < 0)
            return "out of memory";
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        return "line " + std::to_string(dup.line) + ": " + what + " (give each key once)";
    }
    return "";
}

// Reads a whole regular file of at most `cap` bytes.
inline std::string read_file(const std::string &path, size_t cap, std::string &out) {
    out.clear();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "cannot open " + path + ": " + util_file_error(errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        return "cannot stat " + path + ": " + std::strerror(e);
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return path + " is not a regular file";
    }
    if (st.st_size < 0 || (uint64_t)st.st_size > cap) {
        ::close(fd);
        return path + " is too large (" + std::to_string((long long)st.st_size) + " bytes, limit " +
               std::to_string(cap) + ")";
    }
    out.resize((size_t)st.st_size);
    size_t got = 0;
    while (got < out.size()) {
        ssize_t r = ::read(fd, &out[got], out.size() - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            ::close(fd);
            return "cannot read " + path + ": " + std::strerror(e);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    ::close(fd);
    out.resize(got);
    return "";
}

// A JSON integer that is >= 0, as uint64. Doubles, strings and negatives are refused.
inline bool get_u64(json_object *o, uint64_t &v) {
    if (!o || json_object_get_type(o) != json_type_int)
        return false;
    int64_t s = json_object_get_int64(o);
    if (s < 0)
        return false;
    v = s == INT64_MAX ? json_object_get_uint64(o) : (uint64_t)s;
    return true;
}

inline const char *type_name(json_object *o) {
    return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

} // namespace jsonu
} // namespace bosch_torch
