// Objects that outlive their users and are handed from one to the next, such as pinned staging
// buffers (pinning costs about 1 ms per MiB, more than a small solve). One free list per key (a
// device); the objects are never freed: they go with the process.
#pragma once

#include <map>
#include <mutex>
#include <vector>

namespace cnc {

// Holds one T from `key`'s free list (made by make() when the list is empty) for its lifetime,
// then gives it back. The lists grow to the number of leases held at once.
template <class Key, class T>
class lease {
 public:
  template <class Make>
  lease(const Key& key, Make&& make) : key_(key) {
    {
      std::lock_guard<std::mutex> lock(mutex());
      std::vector<T*>& free = pool()[key];
      if (!free.empty()) {
        t_ = free.back();
        free.pop_back();
        return;
      }
    }
    t_ = make();
  }
  ~lease() {
    std::lock_guard<std::mutex> lock(mutex());
    pool()[key_].push_back(t_);
  }
  lease(const lease&) = delete;
  lease& operator=(const lease&) = delete;
  T& operator*() const { return *t_; }
  T* operator->() const { return t_; }

 private:
  static std::mutex& mutex() {
    static auto* m = new std::mutex;
    return *m;
  }
  static std::map<Key, std::vector<T*>>& pool() {
    static auto* p = new std::map<Key, std::vector<T*>>;
    return *p;
  }
  Key key_;
  T* t_ = nullptr;
};

}  // namespace cnc
