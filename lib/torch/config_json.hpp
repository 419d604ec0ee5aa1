// The field readers of config.json, shared by config.cpp, rope.cpp and the
// families (family_*.cpp). Each returns "" or a message naming the field.
// Internal.
#pragma once

#include "checkpoint.hpp"
#include "json_util.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace bosch_torch {
namespace cfgjson {

const int64_t kMaxDim = int64_t(1) << 24; // sanity cap on every size field

inline json_object *field(json_object *root, const char *name) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(root, name, &v))
        return nullptr;
    return v;
}

inline bool present(json_object *root, const char *name) {
    return json_object_object_get_ex(root, name, nullptr);
}

// Absent, or given as null (transformers' None).
inline bool absent(json_object *root, const char *name) {
    json_object *v = field(root, name);
    return !v || json_object_get_type(v) == json_type_null;
}

inline std::string get_int(json_object *root, const char *name, int64_t &out) {
    if (!present(root, name))
        return std::string("missing field ") + name;
    json_object *v = field(root, name);
    if (!v || json_object_get_type(v) != json_type_int)
        return std::string("field ") + name + " must be an integer (got " + jsonu::type_name(v) +
               ")";
    int64_t x = json_object_get_int64(v);
    if (x <= 0)
        return std::string("field ") + name + " must be positive (got " + std::to_string(x) + ")";
    if (x > kMaxDim)
        return std::string("field ") + name + " is implausibly large (" + std::to_string(x) + ")";
    out = x;
    return "";
}

inline std::string get_number(json_object *v, const std::string &name, double &out) {
    if (!v ||
        (json_object_get_type(v) != json_type_double && json_object_get_type(v) != json_type_int))
        return "field " + name + " must be a number (got " + jsonu::type_name(v) + ")";
    double x = json_object_get_double(v);
    if (!std::isfinite(x) || x <= 0)
        return "field " + name + " must be positive and finite";
    out = x;
    return "";
}

// An optional non-negative integer field; `dflt` when absent or null.
inline std::string get_count(json_object *r, const char *name, int64_t dflt, int64_t &out) {
    json_object *v = field(r, name);
    if (!v || json_object_get_type(v) == json_type_null) {
        out = dflt;
        return "";
    }
    if (json_object_get_type(v) != json_type_int || json_object_get_int64(v) < 0 ||
        json_object_get_int64(v) > kMaxDim)
        return std::string("field ") + name + " must be a non-negative integer (got " +
               json_object_to_json_string(v) + ")";
    out = json_object_get_int64(v);
    return "";
}

// An optional boolean field; `out` keeps its value when absent.
inline std::string get_bool(json_object *r, const char *name, bool &out) {
    json_object *v = field(r, name);
    if (!v)
        return "";
    if (json_object_get_type(v) != json_type_boolean)
        return std::string("field ") + name + " must be a boolean (got " + jsonu::type_name(v) +
               ")";
    out = json_object_get_boolean(v) != 0;
    return "";
}

inline std::string num(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

} // namespace cfgjson
} // namespace bosch_torch
