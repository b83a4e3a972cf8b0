/* proto.cc -- proto.h's C interface over libprotobuf (the one C++ file of
 * the tree, since libprotobuf is C++ and the only packaged library that
 * parses .proto files at run time: protobuf-c cannot, protobuf-c#164).
 *
 * Owns: an ll_proto's descriptor databases and pool -- the files the
 * script loaded from disk (a DiskSourceTree over its import paths), those
 * added as descriptors (protosets, reflection) and libprotobuf's built-in
 * well-known types, merged in that order under one DescriptorPool that
 * builds a file when it is first asked for -- the message factory, the
 * methods found so far, and the JSON mapping options k6 uses. Every
 * exception stops at this file's edge: the C side sees -1 and a reason. */
#include "proto.h"

extern "C" {
#include "errmsg.h"
}

#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace pb = google::protobuf;

namespace {

/* The first error of a parse, as "file:line:column: message": the first
 * one with a place in a file when there is one (a missing import is told
 * first without one, then where it is imported). */
class FirstError : public pb::compiler::MultiFileErrorCollector {
  public:
    std::string text;
    bool placed = false;
    void clear() {
        text.clear();
        placed = false;
    }
    void AddError(const std::string &file, int line, int column, const std::string &message) override {
        if (placed || (!text.empty() && line < 0)) return;
        placed = line >= 0;
        if (placed)
            text = file + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
        else
            text = file + ": " + message;
    }
};

/* One line (libprotobuf's JSON errors may point at the text below it),
 * through base/'s one formatter. */
int fail(char *err, size_t errlen, const std::string &s) {
    ll_errmsg(err, errlen, "%.*s", (int)s.find('\n'), s.c_str());
    return -1;
}

bool is_dir(const std::string &p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

struct ll_proto_type {
    const pb::Descriptor *d;
    const pb::Message *prototype; /* of the ll_proto's factory */
};

struct ll_proto {
    pb::compiler::DiskSourceTree tree;
    FirstError parse_errors;
    pb::compiler::SourceTreeDescriptorDatabase disk{&tree};
    pb::SimpleDescriptorDatabase given;                     /* protosets, reflection */
    pb::DescriptorPoolDatabase builtin{*pb::DescriptorPool::generated_pool()};
    pb::MergedDescriptorDatabase merged{std::vector<pb::DescriptorDatabase *>{&given, &disk, &builtin}};
    pb::DescriptorPool pool{&merged, disk.GetValidationErrorCollector()};
    pb::DynamicMessageFactory factory{&pool};
    std::vector<std::string> mapped;                        /* import paths mapped so far */
    std::vector<const pb::FileDescriptor *> files;          /* loaded, in order */
    std::map<const pb::Descriptor *, std::unique_ptr<ll_proto_type>> types;
    std::map<std::string, std::string> paths;               /* method name -> ":path" */

    ll_proto() { disk.RecordErrorsTo(&parse_errors); }

    void map_path(const std::string &dir) {
        for (const std::string &m : mapped)
            if (m == dir) return;
        mapped.push_back(dir);
        tree.MapPath("", dir);
    }

    const ll_proto_type *type_of(const pb::Descriptor *d) {
        auto it = types.find(d);
        if (it != types.end()) return it->second.get();
        const pb::Message *proto = factory.GetPrototype(d);
        if (!proto) return nullptr;
        auto t = std::make_unique<ll_proto_type>();
        t->d = d;
        t->prototype = proto;
        return (types[d] = std::move(t)).get();
    }

    void keep(const pb::FileDescriptor *f) {
        for (const pb::FileDescriptor *g : files)
            if (g == f) return;
        files.push_back(f);
    }
};

extern "C" {

ll_proto *ll_proto_new(void) {
    try {
        return new ll_proto();
    } catch (...) {
        return nullptr;
    }
}

void ll_proto_free(ll_proto *p) { delete p; }

int ll_proto_load(ll_proto *p, const char *const *import_paths, int npaths, const char *file, char *err,
                  size_t errlen) {
    try {
        for (int i = 0; i < npaths; i++) {
            if (!is_dir(import_paths[i])) return fail(err, errlen, std::string(import_paths[i]) + ": not a directory");
            p->map_path(import_paths[i]);
        }
        std::string name = file;
        if (npaths == 0 && p->mapped.empty()) p->map_path(".");
        std::unique_ptr<pb::io::ZeroCopyInputStream> in(p->tree.Open(name));
        if (!in) { /* a path on disk outside the import paths: its folder becomes one */
            std::string virt, shadow;
            if (p->tree.DiskFileToVirtualFile(name, &virt, &shadow) == pb::compiler::DiskSourceTree::SUCCESS) {
                name = virt;
            } else {
                size_t slash = name.rfind('/');
                std::string dir = slash == std::string::npos ? "." : name.substr(0, slash ? slash : 1);
                p->map_path(dir);
                name = slash == std::string::npos ? name : name.substr(slash + 1);
                in.reset(p->tree.Open(name));
                if (!in) return fail(err, errlen, std::string(file) + ": " + p->tree.GetLastErrorMessage());
            }
        }
        in.reset();
        p->parse_errors.clear();
        const pb::FileDescriptor *f = p->pool.FindFileByName(name);
        if (!f) {
            std::string why = p->parse_errors.text;
            if (why.empty()) why = std::string(file) + ": cannot be loaded";
            return fail(err, errlen, why);
        }
        p->keep(f);
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string(file) + ": " + e.what());
    }
}

/* Builds the file named name (given to p->given before) and keeps it. */
static int build_given(ll_proto *p, const std::string &name, char *err, size_t errlen) {
    pb::FileDescriptorProto fdp;
    if (!p->given.FindFileByName(name, &fdp)) return fail(err, errlen, name + ": not among the descriptors given");
    /* the pool's collector (the disk database's) tells a given file's
     * errors with no line: "file: message" */
    p->parse_errors.clear();
    const pb::FileDescriptor *f = p->pool.FindFileByName(name);
    if (!f) return fail(err, errlen, p->parse_errors.text.empty() ? name + ": its types cannot be built" : p->parse_errors.text);
    p->keep(f);
    return 0;
}

int ll_proto_load_set(ll_proto *p, const void *data, size_t len, const char *what, char *err, size_t errlen) {
    try {
        pb::FileDescriptorSet set;
        if (!set.ParseFromArray(data, (int)len))
            return fail(err, errlen, std::string(what) + ": not a FileDescriptorSet (protoc --descriptor_set_out)");
        for (const pb::FileDescriptorProto &f : set.file()) {
            pb::FileDescriptorProto had;
            if (p->given.FindFileByName(f.name(), &had)) continue; /* given before: kept as it was */
            if (!p->given.Add(f)) return fail(err, errlen, std::string(what) + ": " + f.name() + " cannot be added");
        }
        for (const pb::FileDescriptorProto &f : set.file())
            if (build_given(p, f.name(), err, errlen) != 0) return -1;
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string(what) + ": " + e.what());
    }
}

int ll_proto_add_file(ll_proto *p, const void *data, size_t len, char *err, size_t errlen) {
    try {
        pb::FileDescriptorProto f;
        if (!f.ParseFromArray(data, (int)len)) return fail(err, errlen, "not a FileDescriptorProto");
        pb::FileDescriptorProto had;
        if (p->given.FindFileByName(f.name(), &had)) return 0;
        if (!p->given.Add(f)) return fail(err, errlen, f.name() + ": cannot be added");
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, e.what());
    }
}

namespace {
/* The first error of a parse of a .proto text, with its place. */
class TextError : public pb::io::ErrorCollector {
  public:
    std::string text;
    void AddError(int line, pb::io::ColumnNumber column, const std::string &message) override {
        if (text.empty()) text = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
};
} // namespace

int ll_proto_add_source(ll_proto *p, const char *name, const char *text, char *err, size_t errlen) {
    try {
        pb::io::ArrayInputStream in(text, (int)strlen(text));
        TextError errors;
        pb::io::Tokenizer tok(&in, &errors);
        pb::compiler::Parser parser;
        parser.RecordErrorsTo(&errors);
        pb::FileDescriptorProto f;
        if (!parser.Parse(&tok, &f)) return fail(err, errlen, std::string(name) + ":" + errors.text);
        f.set_name(name);
        pb::FileDescriptorProto had;
        if (!p->given.FindFileByName(name, &had) && !p->given.Add(f))
            return fail(err, errlen, std::string(name) + ": cannot be added");
        return build_given(p, name, err, errlen);
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string(name) + ": " + e.what());
    }
}

int ll_proto_find_method(ll_proto *p, const char *name, ll_proto_method *m, char *err, size_t errlen) {
    try {
        std::string n = name[0] == '/' ? name + 1 : name;
        size_t slash = n.rfind('/');
        if (slash == std::string::npos || slash == 0 || slash + 1 == n.size())
            return fail(err, errlen, std::string("method ") + name + ": expected \"package.Service/Method\"");
        const pb::ServiceDescriptor *s = p->pool.FindServiceByName(n.substr(0, slash));
        const pb::MethodDescriptor *md = s ? s->FindMethodByName(n.substr(slash + 1)) : nullptr;
        if (!md) return fail(err, errlen, std::string("method ") + name + " not found in the loaded files");
        const ll_proto_type *in = p->type_of(md->input_type());
        const ll_proto_type *out = p->type_of(md->output_type());
        if (!in || !out) return fail(err, errlen, std::string("method ") + name + ": its messages cannot be made");
        auto it = p->paths.find(n);
        if (it == p->paths.end()) it = p->paths.emplace(n, "/" + n).first;
        m->path = it->second.c_str();
        m->in = in;
        m->out = out;
        m->client_streaming = md->client_streaming();
        m->server_streaming = md->server_streaming();
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string("method ") + name + ": " + e.what());
    }
}

void ll_proto_methods(ll_proto *p, void (*fn)(const char *name, void *ud), void *ud) {
    for (const pb::FileDescriptor *f : p->files)
        for (int i = 0; i < f->service_count(); i++) {
            const pb::ServiceDescriptor *s = f->service(i);
            for (int j = 0; j < s->method_count(); j++) fn((s->full_name() + "/" + s->method(j)->name()).c_str(), ud);
        }
}

const ll_proto_type *ll_proto_find_type(ll_proto *p, const char *full_name) {
    try {
        const pb::Descriptor *d = p->pool.FindMessageTypeByName(full_name);
        return d ? p->type_of(d) : nullptr;
    } catch (...) {
        return nullptr;
    }
}

const char *ll_proto_type_name(const ll_proto_type *t) { return t->d->full_name().c_str(); }

int ll_proto_encode(const ll_proto_type *t, const char *json, size_t len, ll_buf *out, char *err, size_t errlen) {
    try {
        std::unique_ptr<pb::Message> m(t->prototype->New());
        pb::util::JsonParseOptions opts; /* unknown fields are errors, as k6's */
        pb::util::Status st = pb::util::JsonStringToMessage(pb::StringPiece(json, len), m.get(), opts);
        if (!st.ok())
            return fail(err, errlen, t->d->full_name() + ": " + std::string(st.message().data(), st.message().size()));
        std::string wire;
        if (!m->SerializeToString(&wire)) return fail(err, errlen, t->d->full_name() + ": cannot be encoded");
        if (ll_buf_append(out, wire.data(), wire.size()) != 0) return fail(err, errlen, "out of memory");
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, t->d->full_name() + ": " + e.what());
    }
}

int ll_proto_decode(const ll_proto_type *t, const void *data, size_t len, ll_buf *out, char *err, size_t errlen) {
    try {
        std::unique_ptr<pb::Message> m(t->prototype->New());
        if (!m->ParseFromArray(data, (int)len))
            return fail(err, errlen, "the bytes are not a " + t->d->full_name() + " message");
        pb::util::JsonPrintOptions opts;
        opts.always_print_primitive_fields = true; /* k6's EmitUnpopulated */
        std::string text;
        pb::util::Status st = pb::util::MessageToJsonString(*m, &text, opts);
        if (!st.ok())
            return fail(err, errlen, t->d->full_name() + ": " + std::string(st.message().data(), st.message().size()));
        if (ll_buf_append(out, text.data(), text.size()) != 0) return fail(err, errlen, "out of memory");
        return 0;
    } catch (const std::exception &e) {
        return fail(err, errlen, t->d->full_name() + ": " + e.what());
    }
}

} /* extern "C" */
