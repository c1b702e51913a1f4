// The engine's generalized-momentum observer against KDL's ChainExternalWrenchEstimator on the same
// recorded motion: the error of each one's estimated external joint torque, and its cost per cycle.
//
//   bench_observer_kdl --csv FILE --robot iiwa14|puma560 [--gain K_O] [--repeats R] [--settle S] [--cpu K]
//
// FILE is a recording of bench/observer_kdl_motion.py (the repository's): t, then per joint q_, qd_, tau_
// (the tick's command, held until the next) and ext_ (the true external joint torque, held alike), one
// row a tick. The robot is share/robot_dynamics/urdf/<robot>.urdf alone, which both read: the engine its
// model text (`robot-dynamics engine-model --urdf`, no drive train: no rotor inertia), KDL its chain from
// kdl_parser (the URDF's root link to the tool: iiwa_link_ee, tool0), with the model's gravity. Neither
// models friction (the engine's observer with friction off; the recording was made without any).
//
// Subjects, both fed every row (t, q, qd, tau) of the recording from its first, in one process:
//   rd_momentum_observer_update   the engine: the residual r (trapezoidal rule, the torque held from
//                                 one tick to the next, as the recording applied it), its threshold
//                                 and detection; gain K_O on every joint
//   KDL JntToExtWrench            ChainExternalWrenchEstimator(chain, gravity, 1 / dt, K_O, 0): its
//                                 estimation gain = K_O, its low-pass filter off (filter constant 0:
//                                 the engine's residual has none beyond its own first-order lag);
//                                 setInitialMomentum at the first row; per row the whole call that
//                                 yields the joint torques (JntToExtWrench, which also computes the
//                                 tool wrench, then getEstimatedJntTorque)
//   KDL dynamics only             (cost only) ChainDynParam's JntToMass, JntToCoriolis and JntToGravity:
//                                 the part of KDL's call that the joint torques need
//   KDL, torque of the tick before (error only) KDL fed each row's q, qd with the previous row's
//                                 torque: the torque that acted over the period its forward-Euler
//                                 step integrates
//   rd_momentum_observer_update, KDL's pole (error only) the engine's observer with the gain
//                                 2 K_O / (2 - K_O dt), whose step has KDL's pole 1 - K_O dt: KDL's
//                                 forward Euler makes its residual faster than K_O says (at K_O =
//                                 100 /s and 1 kHz, the lag of 105.4 /s), which lowers its error
//                                 against the truth; this row compares the two at one bandwidth
//
// Error: RMS (over joints and rows) and largest |estimate - ext| [N m] from --settle seconds on
// (default 0.1 s), against the true external torque of the row, and against the ideal first-order
// lag of it, r(t_k) = exp(-K_O dt) r(t_(k-1)) + (1 - exp(-K_O dt)) ext_(k-1), what an exact observer of
// gain K_O returns: the first compares with the truth, the second isolates each method's own error.
// Cost: clock_gettime(CLOCK_MONOTONIC) around each call, over R passes of the recording (default 20),
// the subjects interleaved pass by pass (their order alternating): p50, p99, mean and max [ns], and
// ours / KDL of p50 and p99. Prints a table, then one JSON object a line per subject. Exit status 2
// on bad arguments, 1 when the recording or the robot cannot be read or a call fails.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kdl/chaindynparam.hpp"
#include "kdl/chainexternalwrenchestimator.hpp"
#include "kdl/tree.hpp"
#include "kdl_parser/kdl_parser.hpp"
#include "robot_dynamics_control/engine_model.hpp"
#include "test_files.hpp"

namespace
{

using robot_dynamics_control::EngineModel;

/// The bundled robots: the tool's link (the KDL chain's tip).
const std::map<std::string, std::string> kTips = {{"iiwa14", "iiwa_link_ee"}, {"puma560", "tool0"}};

inline int64_t now_ns()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The recording, rows of nq values each in model order (row k at [k * nq, (k + 1) * nq)).
struct Recording
{
  size_t rows = 0, nq = 0;
  std::vector<double> t, q, qd, tau, ext;
  const double * at(const std::vector<double> & v, size_t k) const { return v.data() + k * nq; }
};

/// Reads the CSV of bench/observer_kdl_motion.py, its columns picked by name for `joints` (model order).
Recording read_recording(const std::string & path, const std::vector<std::string> & joints)
{
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot read the recording " + path);
  }
  std::string line;
  std::getline(in, line);
  std::map<std::string, size_t> column;
  {
    std::istringstream header(line);
    size_t c = 0;
    for (std::string name; std::getline(header, name, ','); ++c) {
      column[name] = c;
    }
  }
  const size_t nq = joints.size();
  std::vector<size_t> pick{column.count("t") ? column["t"] : SIZE_MAX};
  for (const char * kind : {"q_", "qd_", "tau_", "ext_"}) {
    for (const auto & j : joints) {
      const auto it = column.find(kind + j);
      pick.push_back(it == column.end() ? SIZE_MAX : it->second);
    }
  }
  if (std::find(pick.begin(), pick.end(), SIZE_MAX) != pick.end()) {
    throw std::runtime_error(path + ": expected the columns t and q_, qd_, tau_, ext_ of each joint of " +
                             robot_dynamics_control::format_names(joints));
  }
  Recording r;
  r.nq = nq;
  std::vector<double> values;
  for (size_t row = 2; std::getline(in, line); ++row) {
    if (line.empty()) {
      continue;
    }
    values.clear();
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) {
      char * end = nullptr;
      values.push_back(std::strtod(cell.c_str(), &end));
      if (end == cell.c_str() || !std::isfinite(values.back())) {
        throw std::runtime_error(path + " line " + std::to_string(row) + ": '" + cell + "' is not a finite number");
      }
    }
    if (values.size() != column.size()) {
      throw std::runtime_error(path + " line " + std::to_string(row) + ": expected " + std::to_string(column.size()) +
                               " values, got " + std::to_string(values.size()));
    }
    r.t.push_back(values[pick[0]]);
    std::vector<double> * fields[] = {&r.q, &r.qd, &r.tau, &r.ext};
    for (size_t f = 0; f < 4; ++f) {
      for (size_t j = 0; j < nq; ++j) {
        fields[f]->push_back(values[pick[1 + f * nq + j]]);
      }
    }
    if (r.t.size() > 1 && !(r.t.back() > r.t[r.t.size() - 2])) {
      throw std::runtime_error(path + " line " + std::to_string(row) + ": t does not increase");
    }
  }
  r.rows = r.t.size();
  if (r.rows < 10) {
    throw std::runtime_error(path + ": expected at least 10 rows, got " + std::to_string(r.rows));
  }
  return r;
}

/// The engine's observer: its options and its state in arrays of its own.
class Ours
{
public:
  Ours(const EngineModel & engine, rd_work & work, double gain)
  : m_(engine.model()), w_(work), n_(static_cast<size_t>(m_.nq)), gain_(n_, gain), threshold_(n_, 1.0),
    relative_(n_, 0.05), state_(8 * n_, 0.0)
  {
    o_.gain = gain_.data();
    o_.threshold = threshold_.data();
    o_.relative = relative_.data();
    o_.gravity = nullptr;  // the model's
    o_.friction = 0;
    o_.smooth = 0.0;
    o_.hold = 1;  // the recording's torque is the tick's command, held until the next
    double * a = state_.data();
    s_ = rd_observer{a, a + n_, a + 2 * n_, a + 3 * n_, a + 4 * n_, a + 5 * n_, a + 6 * n_, a + 7 * n_, 0.0, 0, 0, -1};
    reset();
  }
  void reset() { rd_momentum_observer_reset(&s_, m_.nq); }
  bool update(double t, const double * q, const double * qd, const double * tau)
  {
    return rd_momentum_observer_update(&m_, &o_, &s_, t, q, qd, tau, &w_) == RD_OK;
  }
  const double * residual() const { return s_.r; }

private:
  const rd_model & m_;
  rd_work & w_;
  size_t n_;
  std::vector<double> gain_, threshold_, relative_, state_;
  rd_observer_options o_{};
  rd_observer s_{};
};

/// KDL's chain of the URDF (root link to `tip`), with the permutation of its joints into model order.
struct KdlChain
{
  KDL::Chain chain;
  std::vector<size_t> model_index;  // chain joint i -> model joint
};

KdlChain kdl_chain(const std::string & urdf, const std::string & tip, const std::vector<std::string> & joints)
{
  KDL::Tree tree;
  if (!kdl_parser::treeFromString(urdf, tree)) {
    throw std::runtime_error("kdl_parser cannot read the URDF");
  }
  const std::string root = tree.getRootSegment()->first;
  KdlChain out;
  if (!tree.getChain(root, tip, out.chain)) {
    throw std::runtime_error("KDL has no chain from " + root + " to " + tip);
  }
  for (const auto & segment : out.chain.segments) {
    if (segment.getJoint().getType() == KDL::Joint::None) {
      continue;
    }
    const auto it = std::find(joints.begin(), joints.end(), segment.getJoint().getName());
    if (it == joints.end()) {
      throw std::runtime_error("KDL's joint " + segment.getJoint().getName() + " is not among the model's " +
                               robot_dynamics_control::format_names(joints));
    }
    out.model_index.push_back(static_cast<size_t>(it - joints.begin()));
  }
  if (out.model_index.size() != joints.size()) {
    throw std::runtime_error("KDL's chain to " + tip + " has " + std::to_string(out.model_index.size()) +
                             " joints, the model " + std::to_string(joints.size()));
  }
  return out;
}

/// The recording's rows as KDL's joint arrays (chain order), made once: no copy in the timed part.
struct KdlRows
{
  std::vector<KDL::JntArray> q, qd, tau, tau_before;
};

KdlRows kdl_rows(const Recording & r, const KdlChain & c)
{
  KdlRows out;
  const size_t n = c.model_index.size();
  for (size_t k = 0; k < r.rows; ++k) {
    KDL::JntArray q(static_cast<unsigned>(n)), qd(q), tau(q), before(q);
    for (size_t i = 0; i < n; ++i) {
      const size_t j = c.model_index[i];
      q(i) = r.at(r.q, k)[j];
      qd(i) = r.at(r.qd, k)[j];
      tau(i) = r.at(r.tau, k)[j];
      before(i) = r.at(r.tau, k > 0 ? k - 1 : 0)[j];
    }
    out.q.push_back(q), out.qd.push_back(qd), out.tau.push_back(tau), out.tau_before.push_back(before);
  }
  return out;
}

/// One KDL estimator over the recording: made afresh at each pass (its constructor allocates; not timed).
class Kdl
{
public:
  Kdl(const KdlChain & c, const KDL::Vector & gravity, double rate, double gain)
  : c_(c), gravity_(gravity), rate_(rate), gain_(gain), estimate_(static_cast<unsigned>(c.model_index.size()))
  {
    reset();
  }
  void reset()
  {
    estimator_ = std::make_unique<KDL::ChainExternalWrenchEstimator>(c_.chain, gravity_, rate_, gain_, 0.0);
  }
  /// The first row's momentum (zero from rest), before the first call.
  bool start(const KDL::JntArray & q, const KDL::JntArray & qd) { return estimator_->setInitialMomentum(q, qd) == 0; }
  bool update(const KDL::JntArray & q, const KDL::JntArray & qd, const KDL::JntArray & tau)
  {
    const int status = estimator_->JntToExtWrench(q, qd, tau, wrench_);
    estimator_->getEstimatedJntTorque(estimate_);
    return status == 0;
  }
  double residual(size_t model_joint) const
  {
    const auto & idx = c_.model_index;
    return estimate_(static_cast<unsigned>(std::find(idx.begin(), idx.end(), model_joint) - idx.begin()));
  }

private:
  const KdlChain & c_;
  KDL::Vector gravity_;
  double rate_, gain_;
  std::unique_ptr<KDL::ChainExternalWrenchEstimator> estimator_;
  KDL::JntArray estimate_;
  KDL::Wrench wrench_;
};

/// KDL's dynamics alone: the three ChainDynParam calls of its estimator's first part.
class KdlDynamics
{
public:
  KdlDynamics(const KdlChain & c, const KDL::Vector & gravity)
  : dyn_(c.chain, gravity), mass_(static_cast<unsigned>(c.model_index.size())), coriolis_(mass_.rows()),
    gravity_(mass_.rows())
  {
  }
  bool update(const KDL::JntArray & q, const KDL::JntArray & qd)
  {
    return dyn_.JntToMass(q, mass_) == 0 && dyn_.JntToCoriolis(q, qd, coriolis_) == 0 &&
           dyn_.JntToGravity(q, gravity_) == 0;
  }

private:
  KDL::ChainDynParam dyn_;
  KDL::JntSpaceInertiaMatrix mass_;
  KDL::JntArray coriolis_, gravity_;
};

/// Error figures [N m] of the estimates (rows x nq, model order) from row `first` on.
struct Errors
{
  double rms = 0, max = 0, rms_lag = 0, max_lag = 0;
};

Errors errors_of(const Recording & r, const std::vector<double> & estimate, const std::vector<double> & lag, size_t first)
{
  Errors e;
  double sum = 0, sum_lag = 0;
  size_t count = 0;
  for (size_t k = first; k < r.rows; ++k) {
    for (size_t j = 0; j < r.nq; ++j) {
      const double x = estimate[k * r.nq + j];
      const double d = x - r.at(r.ext, k)[j], dl = x - lag[k * r.nq + j];
      sum += d * d, sum_lag += dl * dl, ++count;
      e.max = std::max(e.max, std::abs(d));
      e.max_lag = std::max(e.max_lag, std::abs(dl));
    }
  }
  e.rms = std::sqrt(sum / static_cast<double>(count));
  e.rms_lag = std::sqrt(sum_lag / static_cast<double>(count));
  return e;
}

/// The ideal first-order lag of the true external torque (rows x nq): r_0 = 0, then the exact solution of
/// dr/dt = K_O (ext - r) over each period, ext held at the previous row's value.
std::vector<double> ideal_lag(const Recording & r, double gain)
{
  std::vector<double> lag(r.rows * r.nq, 0.0);
  for (size_t k = 1; k < r.rows; ++k) {
    const double a = std::exp(-gain * (r.t[k] - r.t[k - 1]));
    for (size_t j = 0; j < r.nq; ++j) {
      lag[k * r.nq + j] = a * lag[(k - 1) * r.nq + j] + (1.0 - a) * r.at(r.ext, k - 1)[j];
    }
  }
  return lag;
}

struct Stats
{
  double p50 = NAN, p99 = NAN, mean = NAN, max = NAN;  // [ns]
};

Stats stats_of(std::vector<int64_t> ns)
{
  if (ns.empty()) {
    return {};
  }
  std::sort(ns.begin(), ns.end());
  const size_t n = ns.size();
  auto rank = [&](double p) {  // nearest rank
    const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
    return static_cast<double>(ns[std::min(n, std::max<size_t>(k, 1)) - 1]);
  };
  double sum = 0;
  for (int64_t v : ns) {
    sum += static_cast<double>(v);
  }
  return {rank(0.50), rank(0.99), sum / static_cast<double>(n), static_cast<double>(ns.back())};
}

struct Options
{
  std::string csv, robot;
  double gain = 100.0, settle = 0.1;
  int repeats = 20, cpu = -1;
};

struct Row
{
  std::string subject;
  bool has_error = false, has_cost = false;
  Errors e;
  Stats s;
};

/// Runs the error pass and the timed passes; returns the rows (ours, KDL, KDL dynamics, KDL torque before,
/// ours at KDL's pole).
std::vector<Row> bench(const Options & opt, size_t & rows_out, size_t & first_out)
{
  const std::string urdf = robot_dynamics_control::test::read_text(
    robot_dynamics_control::test::robot_file("urdf/" + opt.robot + ".urdf"));
  const std::string text = robot_dynamics_control::test::engine_model_text(urdf, "", "");
  if (text.empty()) {
    throw std::runtime_error("robot-dynamics engine-model failed for " + opt.robot);
  }
  auto engine = EngineModel::from_text(text);
  const rd_model & m = engine->model();
  const auto & joints = engine->joint_names();
  const Recording rec = read_recording(opt.csv, joints);
  const KdlChain chain = kdl_chain(urdf, kTips.at(opt.robot), joints);
  const KdlRows kr = kdl_rows(rec, chain);
  const KDL::Vector gravity(m.gravity[0], m.gravity[1], m.gravity[2]);
  const double rate = static_cast<double>(rec.rows - 1) / (rec.t.back() - rec.t.front());  // [Hz]
  const size_t n = rec.nq, N = rec.rows;
  size_t first = 0;
  while (first < N && rec.t[first] - rec.t[0] < opt.settle) {
    ++first;
  }
  if (first >= N) {
    throw std::runtime_error("--settle " + std::to_string(opt.settle) + " s leaves no row of the recording");
  }
  rows_out = N, first_out = first;

  Ours ours(*engine, engine->work(), opt.gain);
  Kdl kdl(chain, gravity, rate, opt.gain);
  KdlDynamics dynamics(chain, gravity);

  // -- the error pass: each estimator once over the recording ------------------------------------
  // KDL's step r_k = (1 - K_O dt) r_(k-1) + K_O dt tau_ext (forward Euler) has the pole 1 - K_O dt; the
  // engine's trapezoidal rule has it at (1 - K dt / 2) / (1 + K dt / 2), equal for K = 2 K_O / (2 - K_O dt)
  const double dt = 1.0 / rate, matched_gain = 2.0 * opt.gain / (2.0 - opt.gain * dt);
  const bool can_match = opt.gain * dt < 2.0;  // else KDL's step is unstable
  Ours matched(*engine, engine->work(), can_match ? matched_gain : opt.gain);
  std::vector<double> r_ours(N * n), r_matched(N * n), r_kdl(N * n), r_before(N * n);
  for (auto [observer, out] : {std::pair{&ours, &r_ours}, std::pair{&matched, &r_matched}}) {
    for (size_t k = 0; k < N; ++k) {
      if (!observer->update(rec.t[k], rec.at(rec.q, k), rec.at(rec.qd, k), rec.at(rec.tau, k))) {
        throw std::runtime_error("rd_momentum_observer_update failed at row " + std::to_string(k));
      }
      std::copy(observer->residual(), observer->residual() + n, out->begin() + static_cast<std::ptrdiff_t>(k * n));
    }
  }
  for (const bool before : {false, true}) {
    kdl.reset();
    if (!kdl.start(kr.q[0], kr.qd[0])) {
      throw std::runtime_error("KDL's setInitialMomentum failed");
    }
    for (size_t k = 0; k < N; ++k) {
      if (!kdl.update(kr.q[k], kr.qd[k], before ? kr.tau_before[k] : kr.tau[k])) {
        throw std::runtime_error("KDL's JntToExtWrench failed at row " + std::to_string(k));
      }
      for (size_t j = 0; j < n; ++j) {
        (before ? r_before : r_kdl)[k * n + j] = kdl.residual(j);
      }
    }
  }
  const std::vector<double> lag = ideal_lag(rec, opt.gain);

  // -- the timed passes, interleaved -------------------------------------------------------------
  std::vector<int64_t> ns_ours, ns_kdl, ns_dyn;
  for (auto * v : {&ns_ours, &ns_kdl, &ns_dyn}) {
    v->reserve(N * static_cast<size_t>(opt.repeats));
  }
  auto pass_ours = [&] {
    ours.reset();
    for (size_t k = 0; k < N; ++k) {
      const int64_t t0 = now_ns();
      const bool ok = ours.update(rec.t[k], rec.at(rec.q, k), rec.at(rec.qd, k), rec.at(rec.tau, k));
      const int64_t t1 = now_ns();
      if (!ok) {
        throw std::runtime_error("rd_momentum_observer_update failed in a timed pass");
      }
      ns_ours.push_back(t1 - t0);
    }
  };
  auto pass_kdl = [&] {
    kdl.reset();
    kdl.start(kr.q[0], kr.qd[0]);
    for (size_t k = 0; k < N; ++k) {
      const int64_t t0 = now_ns();
      const bool ok = kdl.update(kr.q[k], kr.qd[k], kr.tau[k]);
      const int64_t t1 = now_ns();
      if (!ok) {
        throw std::runtime_error("KDL's JntToExtWrench failed in a timed pass");
      }
      ns_kdl.push_back(t1 - t0);
    }
  };
  auto pass_dyn = [&] {
    for (size_t k = 0; k < N; ++k) {
      const int64_t t0 = now_ns();
      const bool ok = dynamics.update(kr.q[k], kr.qd[k]);
      const int64_t t1 = now_ns();
      if (!ok) {
        throw std::runtime_error("KDL's ChainDynParam failed in a timed pass");
      }
      ns_dyn.push_back(t1 - t0);
    }
  };
  pass_ours(), pass_kdl(), pass_dyn();  // a warm-up pass each, not counted
  ns_ours.clear(), ns_kdl.clear(), ns_dyn.clear();
  for (int rep = 0; rep < opt.repeats; ++rep) {
    if (rep % 2 == 0) {
      pass_ours(), pass_kdl(), pass_dyn();
    } else {
      pass_dyn(), pass_kdl(), pass_ours();
    }
  }
  return {
    {"rd_momentum_observer_update", true, true, errors_of(rec, r_ours, lag, first), stats_of(ns_ours)},
    {"KDL JntToExtWrench", true, true, errors_of(rec, r_kdl, lag, first), stats_of(ns_kdl)},
    {"KDL dynamics only", false, true, {}, stats_of(ns_dyn)},
    {"KDL, torque of the tick before", true, false, errors_of(rec, r_before, lag, first), {}},
    {"rd_momentum_observer_update, KDL's pole", can_match, false, errors_of(rec, r_matched, lag, first), {}},
  };
}

int usage(const std::string & reason)
{
  std::fprintf(stderr,
    "bench_observer_kdl: %s\nusage: bench_observer_kdl --csv FILE --robot iiwa14|puma560 [--gain K_O (> 0)] "
    "[--repeats R (>= 1)] [--settle S (>= 0)] [--cpu K]\n",
    reason.c_str());
  return 2;
}

std::string num(double x)
{
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", x);
  return std::isfinite(x) ? std::string(b) : std::string("null");
}

}  // namespace

int main(int argc, char ** argv)
{
  Options opt;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "-h" || a == "--help") {
      std::printf("bench_observer_kdl: the engine's momentum observer against KDL's ChainExternalWrenchEstimator\n"
                  "usage: bench_observer_kdl --csv FILE --robot iiwa14|puma560 [--gain K_O] [--repeats R] "
                  "[--settle S] [--cpu K]\n");
      return 0;
    }
    if (k + 1 >= argc) {
      return usage("option " + a + " needs a value");
    }
    const std::string v = argv[++k];
    char * end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    const bool number = !v.empty() && *end == '\0' && std::isfinite(x);
    if (a == "--csv") {
      opt.csv = v;
    } else if (a == "--robot" && kTips.count(v)) {
      opt.robot = v;
    } else if (a == "--robot") {
      return usage("unknown robot '" + v + "': iiwa14 or puma560");
    } else if (a == "--gain" && number && x > 0) {
      opt.gain = x;
    } else if (a == "--settle" && number && x >= 0) {
      opt.settle = x;
    } else if (a == "--repeats" && number && x >= 1 && x == std::floor(x)) {
      opt.repeats = static_cast<int>(x);
    } else if (a == "--cpu" && number && x >= 0 && x == std::floor(x)) {
      opt.cpu = static_cast<int>(x);
    } else if (a == "--gain" || a == "--settle" || a == "--repeats" || a == "--cpu") {
      return usage("bad value '" + v + "' for " + a);
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  if (opt.csv.empty() || opt.robot.empty()) {
    return usage("--csv and --robot are required");
  }
  if (opt.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(opt.cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      return usage("cannot pin to core " + std::to_string(opt.cpu));
    }
  }
  std::vector<Row> rows;
  size_t samples = 0, first = 0;
  try {
    rows = bench(opt, samples, first);
  } catch (const std::exception & e) {
    std::fprintf(stderr, "bench_observer_kdl: %s\n", e.what());
    return 1;
  }
  const Row & ours = rows[0];
  const Row & kdl = rows[1];
  const Row & dyn = rows[2];
  std::printf(
    "%s: %zu rows, K_O = %g /s on every joint, errors from row %zu on [N m]; cost over %d passes [ns], "
    "clock_gettime(CLOCK_MONOTONIC) around each call\n",
    opt.robot.c_str(), samples, opt.gain, first, opt.repeats);
  std::printf("%-40s %10s %10s %11s %11s %9s %9s %9s %9s\n", "subject", "rms err", "max err", "rms vs lag",
    "max vs lag", "p50", "p99", "mean", "max");
  for (const auto & r : rows) {
    auto cell = [](bool has, double x, const char * fmt) {
      char b[32];
      std::snprintf(b, sizeof b, fmt, x);
      return has ? std::string(b) : std::string("-");
    };
    std::printf("%-40s %10s %10s %11s %11s %9s %9s %9s %9s\n", r.subject.c_str(), cell(r.has_error, r.e.rms, "%.4g").c_str(),
      cell(r.has_error, r.e.max, "%.4g").c_str(), cell(r.has_error, r.e.rms_lag, "%.3g").c_str(),
      cell(r.has_error, r.e.max_lag, "%.3g").c_str(), cell(r.has_cost, r.s.p50, "%.0f").c_str(),
      cell(r.has_cost, r.s.p99, "%.0f").c_str(), cell(r.has_cost, r.s.mean, "%.0f").c_str(),
      cell(r.has_cost, r.s.max, "%.0f").c_str());
  }
  std::printf("ours / KDL JntToExtWrench: cost p50 %.3f, p99 %.3f; rms error %.3f, max error %.3f\n",
    ours.s.p50 / kdl.s.p50, ours.s.p99 / kdl.s.p99, ours.e.rms / kdl.e.rms, ours.e.max / kdl.e.max);
  std::printf("ours / KDL dynamics only: cost p50 %.3f, p99 %.3f\n", ours.s.p50 / dyn.s.p50, ours.s.p99 / dyn.s.p99);
  if (rows[4].has_error) {
    std::printf("ours at KDL's pole / KDL JntToExtWrench: rms error %.3f, max error %.3f\n", rows[4].e.rms / kdl.e.rms,
      rows[4].e.max / kdl.e.max);
  }
  for (const auto & r : rows) {
    const double nan = std::nan("");
    std::printf(
      "{\"robot\": \"%s\", \"subject\": \"%s\", \"gain\": %s, \"rows\": %zu, \"first_row\": %zu, \"passes\": %d, "
      "\"rms_error\": %s, \"max_error\": %s, \"rms_error_vs_lag\": %s, \"max_error_vs_lag\": %s, "
      "\"p50_ns\": %s, \"p99_ns\": %s, \"mean_ns\": %s, \"max_ns\": %s}\n",
      opt.robot.c_str(), r.subject.c_str(), num(opt.gain).c_str(), samples, first, opt.repeats,
      num(r.has_error ? r.e.rms : nan).c_str(), num(r.has_error ? r.e.max : nan).c_str(),
      num(r.has_error ? r.e.rms_lag : nan).c_str(), num(r.has_error ? r.e.max_lag : nan).c_str(),
      num(r.has_cost ? r.s.p50 : nan).c_str(), num(r.has_cost ? r.s.p99 : nan).c_str(),
      num(r.has_cost ? r.s.mean : nan).c_str(), num(r.has_cost ? r.s.max : nan).c_str());
  }
  return 0;
}
