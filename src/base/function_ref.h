// FunctionRef<R(Args...)>: a reference to a callable, passed where a
// std::function would allocate on a path that must not (a collective's inner
// loop, a call per step). It holds the callable's address and one function
// pointer; it takes only callables that have a name (lvalues), so that the
// reference cannot outlive a temporary; the callable must outlive every call
// through it.
#pragma once

#include <type_traits>
#include <utility>

namespace dist {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename Fn, typename = std::enable_if_t<!std::is_same_v<std::decay_t<Fn>, FunctionRef>>>
  FunctionRef(Fn& fn)  // NOLINT(google-explicit-constructor): used like a function
      : self_(static_cast<void*>(&fn)),
        call_([](void* self, Args... args) -> R { return (*static_cast<Fn*>(self))(std::forward<Args>(args)...); }) {}

  R operator()(Args... args) const { return call_(self_, std::forward<Args>(args)...); }

 private:
  void* self_;
  R (*call_)(void*, Args...);
};

}  // namespace dist
