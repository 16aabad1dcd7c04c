// Launch discovery (torchrun-style or MPI variables) and the unique-id rendezvous (TCP or file).
#include "fp8lab/checkpoint.hpp"  // write_file_atomic
#include "fp8lab/distributed.hpp"
#include "fp8lab/error.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>

namespace fp8lab {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A strict decimal integer: the whole value, no sign games, no overflow.
int parse_int_var(const char* name, const char* text, int min, int max) {
  const std::string_view s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  FP8LAB_CHECK(!s.empty() && ec == std::errc() && end == s.data() + s.size(),
               "environment variable {}='{}' is not an integer", name, s);
  FP8LAB_CHECK(value >= min && value <= max, "environment variable {}={} is outside [{}, {}]", name,
               value, min, max);
  return value;
}

}  // namespace

DistributedEnv read_distributed_env(const EnvLookup& lookup) {
  const EnvLookup& get = lookup;
  auto has = [&](const char* n) { return get(n) != nullptr; };
  struct Scheme {
    const char* launcher;
    const char* rank;
    const char* size;
    std::vector<const char*> local;  // the first one set is used
  };
  const Scheme schemes[] = {
      {"torchrun", "RANK", "WORLD_SIZE", {"LOCAL_RANK"}},
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", {"OMPI_COMM_WORLD_LOCAL_RANK"}},
      {"pmi", "PMI_RANK", "PMI_SIZE", {"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}},
  };
  DistributedEnv env;
  env.launcher = "none";
  for (const Scheme& s : schemes) {
    if (!has(s.rank) && !has(s.size)) continue;
    FP8LAB_CHECK(has(s.rank) && has(s.size), "{} is set but {} is not (a {} launch sets both)",
                 has(s.rank) ? s.rank : s.size, has(s.rank) ? s.size : s.rank, s.launcher);
    env.launcher = s.launcher;
    env.world_size = parse_int_var(s.size, get(s.size), 1, 1 << 20);
    env.rank = parse_int_var(s.rank, get(s.rank), 0, 1 << 20);
    FP8LAB_CHECK(env.rank < env.world_size, "environment variable {}={} is not below {}={}", s.rank,
                 env.rank, s.size, env.world_size);
    const char* local_name = nullptr;
    for (const char* n : s.local) {
      if (has(n)) {
        local_name = n;
        break;
      }
    }
    if (local_name != nullptr) {
      env.local_rank = parse_int_var(local_name, get(local_name), 0, 1 << 20);
    } else {
      // One rank alone needs no device choice; several must say which GPU is theirs.
      FP8LAB_CHECK(env.world_size == 1,
                   "{} is not set: a {} launch of {} ranks must say which GPU each rank uses",
                   s.local.front(), s.launcher, env.world_size);
    }
    break;
  }
  if (has("FP8LAB_RENDEZVOUS_FILE")) {
    env.rendezvous_file = get("FP8LAB_RENDEZVOUS_FILE");
    FP8LAB_CHECK(!env.rendezvous_file.empty(), "environment variable FP8LAB_RENDEZVOUS_FILE is empty");
  }
  if (has("MASTER_ADDR")) env.master_addr = get("MASTER_ADDR");
  if (has("MASTER_PORT")) env.master_port = parse_int_var("MASTER_PORT", get("MASTER_PORT"), 1, 65535);
  if (env.world_size > 1 && env.rendezvous_file.empty()) {
    FP8LAB_CHECK(!env.master_addr.empty(),
                 "MASTER_ADDR is not set (or empty): {} ranks need MASTER_ADDR and MASTER_PORT for "
                 "the TCP rendezvous, or FP8LAB_RENDEZVOUS_FILE for a shared file",
                 env.world_size);
    FP8LAB_CHECK(env.master_port != 0,
                 "MASTER_PORT is not set: {} ranks need MASTER_ADDR and MASTER_PORT for the TCP "
                 "rendezvous, or FP8LAB_RENDEZVOUS_FILE for a shared file",
                 env.world_size);
  }
  return env;
}

namespace {

// The wire format: a rank sends kHello, its rank and the world size it was launched with (three
// u32, little-endian on every machine fp8lab runs on); rank 0 answers kHello and the id. The
// check catches a rank of another job, or of the same job launched with another world size.
constexpr std::uint32_t kHello = 0x38504631;  // "1FP8"
constexpr std::size_t kRequestBytes = 12;

class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1 << 30));
}

// Waits for fd to be readable (or writable); false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  pollfd p{fd, events, 0};
  for (;;) {
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

// Reads or writes exactly n bytes before the deadline; false on timeout or a closed peer.
bool transfer(int fd, void* data, std::size_t n, bool send, Clock::time_point deadline) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (n > 0) {
    if (!wait_fd(fd, send ? POLLOUT : POLLIN, deadline)) return false;
    const ssize_t k = send ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    p += k;
    n -= static_cast<std::size_t>(k);
  }
  return true;
}

void put_u32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

UniqueId serve_id(const DistributedEnv& env, const UniqueId& id, Clock::time_point deadline,
                  milliseconds timeout) {
  Socket listener(::socket(AF_INET6, SOCK_STREAM, 0));
  const bool v6 = listener.fd() >= 0;
  if (!v6) listener = Socket(::socket(AF_INET, SOCK_STREAM, 0));
  FP8LAB_CHECK_KIND(ErrorKind::io, listener.fd() >= 0, "rendezvous: socket(): {}",
                    std::strerror(errno));
  const int one = 1, zero = 0;
  ::setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  int rc = 0;
  if (v6) {
    // Dual stack: IPv4 ranks connect too.
    ::setsockopt(listener.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<std::uint16_t>(env.master_port));
    rc = ::bind(listener.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<std::uint16_t>(env.master_port));
    rc = ::bind(listener.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  FP8LAB_CHECK_KIND(ErrorKind::io, rc == 0,
                    "rendezvous: rank 0 cannot listen on port {} (MASTER_PORT): {}",
                    env.master_port, std::strerror(errno));
  FP8LAB_CHECK_KIND(ErrorKind::io, ::listen(listener.fd(), 128) == 0,
                    "rendezvous: listen() on port {}: {}", env.master_port, std::strerror(errno));
  std::vector<bool> served(static_cast<std::size_t>(env.world_size), false);
  served[0] = true;
  for (int done = 1; done < env.world_size;) {
    FP8LAB_CHECK_KIND(ErrorKind::io, wait_fd(listener.fd(), POLLIN, deadline),
                      "rendezvous: rank 0 waited {} ms on port {} but only {} of {} ranks "
                      "connected (check MASTER_ADDR/MASTER_PORT on the others and that they run)",
                      timeout.count(), env.master_port, done, env.world_size);
    Socket peer(::accept(listener.fd(), nullptr, nullptr));
    if (peer.fd() < 0) continue;  // e.g. the peer gave up already
    std::uint8_t req[kRequestBytes];
    if (!transfer(peer.fd(), req, sizeof req, false, deadline)) continue;
    const std::uint32_t magic = get_u32(req), rank = get_u32(req + 4), world = get_u32(req + 8);
    FP8LAB_CHECK_KIND(ErrorKind::io, magic == kHello,
                      "rendezvous: a connection to port {} is not an fp8lab rank (another job on "
                      "this port?)",
                      env.master_port);
    FP8LAB_CHECK_KIND(ErrorKind::io,
                      world == static_cast<std::uint32_t>(env.world_size) && rank > 0 &&
                          rank < world && !served[rank],
                      "rendezvous: rank {} of world {} connected, but rank 0 runs world {}{}", rank,
                      world, env.world_size,
                      rank < served.size() && served[rank] ? " and already served that rank" : "");
    std::uint8_t reply[4 + 128];
    put_u32(reply, kHello);
    std::memcpy(reply + 4, id.data(), id.size());
    if (!transfer(peer.fd(), reply, sizeof reply, true, deadline)) continue;
    served[rank] = true;
    ++done;
  }
  return id;
}

std::optional<Socket> try_connect(const DistributedEnv& env, std::string& last_error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(env.master_port);
  const int g = ::getaddrinfo(env.master_addr.c_str(), port.c_str(), &hints, &found);
  if (g != 0) {
    last_error = std::string("cannot resolve MASTER_ADDR: ") + ::gai_strerror(g);
    return std::nullopt;
  }
  std::optional<Socket> out;
  for (addrinfo* a = found; a != nullptr && !out; a = a->ai_next) {
    Socket s(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
    if (s.fd() < 0) continue;
    if (::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
      out = std::move(s);
    } else {
      last_error = std::strerror(errno);
    }
  }
  ::freeaddrinfo(found);
  return out;
}

UniqueId fetch_id(const DistributedEnv& env, Clock::time_point deadline, milliseconds timeout) {
  std::string last_error = "no attempt";
  for (;;) {
    std::optional<Socket> s = try_connect(env, last_error);
    if (s) {
      std::uint8_t req[kRequestBytes];
      put_u32(req, kHello);
      put_u32(req + 4, static_cast<std::uint32_t>(env.rank));
      put_u32(req + 8, static_cast<std::uint32_t>(env.world_size));
      std::uint8_t reply[4 + 128];
      if (transfer(s->fd(), req, sizeof req, true, deadline) &&
          transfer(s->fd(), reply, sizeof reply, false, deadline)) {
        FP8LAB_CHECK_KIND(ErrorKind::io, get_u32(reply) == kHello,
                          "rendezvous: rank {}: {}:{} answered, but not as fp8lab rank 0", env.rank,
                          env.master_addr, env.master_port);
        UniqueId id;
        std::memcpy(id.data(), reply + 4, id.size());
        return id;
      }
      last_error = "rank 0 closed the connection or did not answer (see rank 0's error)";
    }
    FP8LAB_CHECK_KIND(ErrorKind::io, Clock::now() < deadline,
                      "rendezvous: rank {} could not get the id from rank 0 at {}:{} within {} ms "
                      "(last error: {})",
                      env.rank, env.master_addr, env.master_port, timeout.count(), last_error);
    std::this_thread::sleep_for(milliseconds(50));  // rank 0 may not listen yet
  }
}

// File: magic, world size, id (136 bytes).
UniqueId file_rendezvous(const DistributedEnv& env, const UniqueId& id, Clock::time_point deadline,
                         milliseconds timeout) {
  namespace fs = std::filesystem;
  const fs::path path = env.rendezvous_file;
  if (env.rank == 0) {
    FP8LAB_CHECK_KIND(ErrorKind::io, !fs::exists(path),
                      "rendezvous file '{}' (FP8LAB_RENDEZVOUS_FILE) already exists: it may hold "
                      "another launch's id; remove it or use a fresh path per launch",
                      path.string());
    std::uint8_t bytes[8 + 128];
    put_u32(bytes, kHello);
    put_u32(bytes + 4, static_cast<std::uint32_t>(env.world_size));
    std::memcpy(bytes + 8, id.data(), id.size());
    write_file_atomic(path, bytes, sizeof bytes);
    return id;
  }
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      const std::vector<char> b((std::istreambuf_iterator<char>(in)), {});
      const auto* u = reinterpret_cast<const std::uint8_t*>(b.data());
      FP8LAB_CHECK_KIND(ErrorKind::io, b.size() == 136 && get_u32(u) == kHello,
                        "rendezvous file '{}' is not an fp8lab id file ({} bytes)", path.string(),
                        b.size());
      FP8LAB_CHECK_KIND(ErrorKind::io, get_u32(u + 4) == static_cast<std::uint32_t>(env.world_size),
                        "rendezvous file '{}' was written for world size {}, rank {} runs {}",
                        path.string(), get_u32(u + 4), env.rank, env.world_size);
      UniqueId out;
      std::memcpy(out.data(), u + 8, out.size());
      return out;
    }
    FP8LAB_CHECK_KIND(ErrorKind::io, Clock::now() < deadline,
                      "rendezvous: rank {} waited {} ms for rank 0 to write '{}' "
                      "(FP8LAB_RENDEZVOUS_FILE; is it on a file system every rank sees?)",
                      env.rank, timeout.count(), path.string());
    std::this_thread::sleep_for(milliseconds(50));
  }
}

}  // namespace

UniqueId exchange_unique_id(const DistributedEnv& env, const UniqueId& id_on_rank0,
                            milliseconds timeout) {
  if (env.world_size == 1) return id_on_rank0;
  const auto deadline = Clock::now() + timeout;
  if (!env.rendezvous_file.empty()) return file_rendezvous(env, id_on_rank0, deadline, timeout);
  FP8LAB_CHECK(env.master_port > 0 && !env.master_addr.empty(),
               "rendezvous: MASTER_ADDR/MASTER_PORT are not set (addr '{}', port {})",
               env.master_addr, env.master_port);
  if (env.rank == 0) return serve_id(env, id_on_rank0, deadline, timeout);
  return fetch_id(env, deadline, timeout);
}

}  // namespace fp8lab
