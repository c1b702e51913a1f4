// The cost of one update() of each controller of this package, with its peers side by side in the
// same process: the engine call alone and ros2_controllers' JointGroupEffortController.
//
//   bench_update [--calls N] [--warmup W] [--robot puma560|three_dof_geared|iiwa14|all] [--rounds R] [--cpu K]
//
// For each robot (share/robot_dynamics/urdf/<robot>.urdf with config/<robot>_drivetrain.yaml where it has one,
// its model text made by `robot-dynamics engine-model --strict` as a launch makes the controllers'
// robot_model, test/test_files.hpp), each subject is timed
// over N calls (default 100,000, after W = 1,000 warm-up calls) with clock_gettime(CLOCK_MONOTONIC)
// around each call:
//
//   controllers, configured and activated on plain doubles (test/controller_harness.hpp), the
//   measured state moving every call (written outside the timed part):
//     GravityCompensationController   friction_feedforward on
//     PdGravityController             a goal set through set_reference (what ~/reference does)
//     ComputedTorqueController        a quintic trajectory through set_trajectory, spanning the run
//     ComputedTorqueController        chained: its reference interfaces written every call, as the
//                                     controller in front of it does
//     CollisionMonitorController      chained: its effort references written every call, passed
//                                     through, the momentum observer updated (thresholds 1e9: no
//                                     detection, the steady state of a monitored arm)
//     CartesianImpedanceController    the model's last frame held at its pose of the first state
//     OperationalSpaceController      (stiffness 1000 N/m, 100 N m/rad; omega 20 rad/s) while the
//                                     state moves
//   peers:
//     JointGroupEffortController      effort_controllers, on the same joints, a new command every
//                                     10 calls (written outside the timed part)
//     rd_rnea                         the engine alone: inverse dynamics with friction for the same
//                                     state (the work of computed torque), through its own EngineModel
//     rd_gravity_compensation, rd_pd_gravity, rd_computed_torque: each controller's law alone
//     rd_momentum_observer_update     the monitor's observer alone
//     rd_compliant_control            the Cartesian impedance law alone (iiwa14 only): its last frame,
//                                     iiwa_link_ee (m.nf - 1), held at a fixed pose near the moving
//                                     state's, K = 1000 N/m and 100 N m/rad, damping ratio 0.7, the
//                                     posture's stiffness 10 N m/rad in the null space
//     CRISP-style Cartesian impedance (Pinocchio)
//                                     the same law written as CRISP (utiasDSL/crisp_controllers) writes
//                                     it (iiwa14 only, built with RD_BENCH_PINOCCHIO_PREFIX): per call
//                                     forwardKinematics, computeFrameJacobian, computeMinverse, the task
//                                     inertia by an SVD pseudo-inverse of J M^-1 J^T, an SVD pseudo-
//                                     inverse of J, computeAllTerms, computeCoriolisMatrix and
//                                     computeGeneralizedGravity, in dynamic-size Eigen matrices
//                                     (crisp_style_impedance.hpp); its damping CRISP's, 2 sqrt(K). After
//                                     the timed calls it is given the engine's damping on a few states
//                                     and must give rd_compliant_control's torques (1e-6 relative)
//     clock_gettime                   an empty timed part: the timer's and the call's own cost
//
// The subjects run in R interleaved rounds (default 10) of N / R calls each, so that all of them see
// the same machine load. --cpu K pins the timing thread to core K once the controllers exist; their
// publisher threads stay free to run on the other cores (pin_timing_thread). Prints a table of p50, p99, p99.9, max and mean [us], the calls over 20 us
// and the ratios ours / rd_rnea, ours / JointGroupEffortController and ours / CRISP-style (of p50 and
// p99; the last for rd_compliant_control too), then one
// JSON object a line per subject x robot. Exit status 2 on bad arguments, 1 when a subject cannot be set up.
#include <sched.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "compliant_subjects.hpp"
#include "controller_harness.hpp"
#include "controller_interface/version.h"
#include "robot_dynamics_control/cartesian_impedance_controller.hpp"
#include "robot_dynamics_control/collision_monitor_controller.hpp"
#include "robot_dynamics_control/computed_torque_controller.hpp"
#include "robot_dynamics_control/engine_model.hpp"
#include "robot_dynamics_control/gravity_compensation_controller.hpp"
#include "robot_dynamics_control/operational_space_controller.hpp"
#include "robot_dynamics_control/pd_gravity_controller.hpp"
#include "test_files.hpp"
#ifdef RD_BENCH_HAVE_EFFORT_CONTROLLERS
#include "effort_controllers/joint_group_effort_controller.hpp"
#endif

namespace
{

using robot_dynamics_control::EngineModel;
using robot_dynamics_control::bench::CompliantLaw;
using robot_dynamics_control::bench::kCompliantRobot;
using robot_dynamics_control::bench::kCrispName;
using robot_dynamics_control::test::Harness;
using robot_dynamics_control::test::ParamsFile;
using robot_dynamics_control::test::read_text;
using robot_dynamics_control::test::robot_file;

constexpr double kDt = 0.001;  // the control period the controllers are told [s]
const char * const kRobots[] = {"puma560", "three_dof_geared", "iiwa14"};
constexpr double kAmplitude = 0.3;  // of the joints' sines [rad]

#ifdef RD_BENCH_HAVE_EFFORT_CONTROLLERS
/// JointGroupEffortController with its command set directly (what its ~/commands subscription does
/// on a message: the same real-time buffer, read by the same update()).
class EffortPeer : public effort_controllers::JointGroupEffortController
{
public:
  void set_command(const std::vector<double> & efforts)
  {
    auto msg = std::make_shared<std_msgs::msg::Float64MultiArray>();
    msg->data = efforts;
    rt_command_ptr_.writeFromNonRT(msg);
  }
};
#endif

inline int64_t now_ns()
{
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// The measured state of call k (model order, (nq) each): every joint on its own sine about 0,
/// +-0.3 rad at 0.3 to 0.8 Hz, inside the joint limits of both robots.
void moving_state(int64_t k, std::vector<double> & q, std::vector<double> & qd)
{
  const double t = kDt * static_cast<double>(k);
  for (size_t i = 0; i < q.size(); ++i) {
    const double w = 2.0 * M_PI * (0.3 + 0.1 * static_cast<double>(i));  // rad/s
    q[i] = kAmplitude * std::sin(w * t + static_cast<double>(i));
    qd[i] = kAmplitude * w * std::cos(w * t + static_cast<double>(i));
  }
}

/// One subject: `prepare(k)` before call k (not timed), `call(k)` timed.
struct Subject
{
  std::string name, kind;  // kind: controller, peer, engine, timer
  std::function<void(int64_t)> prepare;
  std::function<bool(int64_t)> call;  // false: the call failed (the bench stops)
  std::vector<int64_t> ns;            // one duration a timed call
  int64_t next = 0;                   // its next call number (warm-up included)
};

constexpr int64_t kGoalNs = 20000;  // the goal for the PUMA 560: p99 <= 20 us

struct Stats
{
  double p50, p99, p999, max, mean;  // [us]
  int64_t over_goal;                 // calls longer than kGoalNs
};

Stats stats_of(std::vector<int64_t> ns)
{
  std::sort(ns.begin(), ns.end());
  const size_t n = ns.size();
  auto rank = [&](double p) {  // nearest rank
    const size_t r = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
    return 1e-3 * static_cast<double>(ns[std::min(n, std::max<size_t>(r, 1)) - 1]);
  };
  double sum = 0.0;
  for (int64_t v : ns) {
    sum += static_cast<double>(v);
  }
  const auto over = static_cast<int64_t>(ns.end() - std::upper_bound(ns.begin(), ns.end(), kGoalNs));
  return {rank(0.50), rank(0.99), rank(0.999), 1e-3 * static_cast<double>(ns.back()),
          1e-3 * sum / static_cast<double>(n), over};
}

std::string yaml_list(const std::vector<std::string> & names)
{
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    s += (i ? ", " : "") + names[i];
  }
  return s + "]";
}

/// A trajectory message of `points` waypoints every `step` seconds along moving_state's sines (their
/// velocities and accelerations too), the first at `step`.
trajectory_msgs::msg::JointTrajectory sine_trajectory(
  const std::vector<std::string> & joints, size_t points, double step)
{
  trajectory_msgs::msg::JointTrajectory msg;
  msg.joint_names = joints;
  const size_t n = joints.size();
  for (size_t p = 1; p <= points; ++p) {
    trajectory_msgs::msg::JointTrajectoryPoint point;
    const double t = step * static_cast<double>(p);
    point.time_from_start = rclcpp::Duration::from_seconds(t);
    for (size_t i = 0; i < n; ++i) {
      const double w = 2.0 * M_PI * (0.3 + 0.1 * static_cast<double>(i));
      point.positions.push_back(kAmplitude * std::sin(w * t + static_cast<double>(i)));
      point.velocities.push_back(kAmplitude * w * std::cos(w * t + static_cast<double>(i)));
      point.accelerations.push_back(-kAmplitude * w * w * std::sin(w * t + static_cast<double>(i)));
    }
    msg.points.push_back(point);
  }
  return msg;
}

struct Options
{
  int64_t calls = 100000, warmup = 1000;
  int rounds = 10, cpu = -1;
  std::vector<std::string> robots{std::begin(kRobots), std::end(kRobots)};
};

int usage(const std::string & reason)
{
  std::fprintf(stderr,
    "bench_update: %s\nusage: bench_update [--calls N (>= 100)] [--warmup W (>= 0)] "
    "[--robot puma560|three_dof_geared|iiwa14|all] [--rounds R (1..calls)] [--cpu K (pin to core K)]\n",
    reason.c_str());
  return 2;
}

/// One subject's figures on one robot.
struct Row
{
  std::string robot, name, kind;
  Stats s;
  long allocations = 0;  // in 1,000 untimed calls after the timed ones
};

/// Sets up every subject of `robot`, times them in interleaved rounds and appends their rows.
/// Throws std::runtime_error when a subject cannot be set up or a call fails.
/// The calling thread on core `cpu` (>= 0), or on every core (-1). Threads take their creator's
/// affinity: bench_robot frees this thread before it makes the controllers, whose realtime_tools
/// publisher threads then run on any core, and pins it after, as a real-time setup pins its control
/// thread and keeps the non-real-time threads off that core (pinned with the process, the bench's own
/// state publishers, at 50 Hz of the bench's 1 ms steps that run 300 times faster than real time,
/// preempted the timed calls: about 10 us at p99 for every controller).
void pin_timing_thread(int cpu)
{
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (cpu < 0 || c == cpu) {
      CPU_SET(c, &set);
    }
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0 && cpu >= 0) {
    throw std::runtime_error("cannot pin to core " + std::to_string(cpu));
  }
}

void bench_robot(const std::string & robot, const Options & opt, std::vector<Row> & rows)
{
  pin_timing_thread(-1);  // the controllers' threads made below may run anywhere
  const std::string urdf = read_text(robot_file("urdf/" + robot + ".urdf"));
  // the robot's drive train where it has one (the iiwa14 has none)
  std::string drivetrain = robot_file("config/" + robot + "_drivetrain.yaml");
  if (!std::ifstream(drivetrain)) {
    drivetrain.clear();
  }
  // the engine's own model, of the text the controllers are given
  const std::string text = robot_dynamics_control::test::engine_model_text(urdf, drivetrain, "--strict");
  if (text.empty()) {
    throw std::runtime_error("robot-dynamics engine-model --strict failed for " + robot);
  }
  const auto engine = EngineModel::from_text(text);
  const rd_model & m = engine->model();
  rd_work & w = engine->work();
  const auto & joints = engine->joint_names();  // model order: the controllers' too
  const size_t n = joints.size();
  const std::string head = "    joints: " + yaml_list(joints) + "\n    drivetrain: \"" + drivetrain + "\"\n";
  const int64_t total = opt.warmup + opt.calls;

  std::vector<Subject> subjects;
  std::vector<double> q(n), qd(n), qdd(n, 0.0), tau(n), qr(n), qdr(n), qddr(n);
  const std::vector<double> kp(n, 100.0), kd(n, 20.0);

  // -- our controllers ---------------------------------------------------------------------------
  // the friction's bare sign, as rd_gravity_compensation's (the check after the timed calls)
  ParamsFile gravity_params(urdf, head + "    friction_feedforward: true\n    friction_smoothing_velocity: 0.0\n");
  auto gravity = std::make_shared<Harness<robot_dynamics_control::GravityCompensationController>>(
    "gravity_compensation", gravity_params.path(), urdf);
  gravity->activate();
  subjects.push_back({"GravityCompensationController", "controller",
    [&, gravity](int64_t k) { moving_state(k, q, qd); gravity->set_state(q, qd); },
    [gravity](int64_t k) {
      return gravity->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK;
    }, {}, 0});

  ParamsFile pd_params(urdf, head + "    kp: [100.0]\n    kd: [20.0]\n    friction_feedforward: true\n");
  auto pd = std::make_shared<Harness<robot_dynamics_control::PdGravityController>>("pd_gravity", pd_params.path(), urdf);
  pd->activate();
  {
    const auto goal = sine_trajectory(joints, 1, 0.5);  // its last point is the goal
    const std::string reason = pd->controller->set_reference(goal);
    if (!reason.empty()) {
      throw std::runtime_error("PdGravityController rejected the goal: " + reason);
    }
  }
  subjects.push_back({"PdGravityController", "controller",
    [&, pd](int64_t k) { moving_state(k, q, qd); pd->set_state(q, qd); },
    [pd](int64_t k) { return pd->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK; },
    {}, 0});

  ParamsFile ct_params(urdf, head + "    omega: [20.0]\n    xi: [1.0]\n");
  auto ct = std::make_shared<Harness<robot_dynamics_control::ComputedTorqueController>>(
    "computed_torque", ct_params.path(), urdf);
  ct->activate();
  {
    const double step = 0.5;  // waypoints every 0.5 s beyond the run's last call
    const auto points = static_cast<size_t>(std::ceil(kDt * static_cast<double>(total) / step)) + 2;
    const std::string reason = ct->controller->set_trajectory(sine_trajectory(joints, points, step));
    if (!reason.empty()) {
      throw std::runtime_error("ComputedTorqueController rejected the trajectory: " + reason);
    }
  }
  subjects.push_back({"ComputedTorqueController", "controller",
    [&, ct](int64_t k) { moving_state(k, q, qd); ct->set_state(q, qd); },
    [ct](int64_t k) { return ct->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK; },
    {}, 0});

  auto chained = std::make_shared<Harness<robot_dynamics_control::ComputedTorqueController>>(
    "computed_torque_chained", ct_params.path(), urdf, true);
  chained->activate();
  if (chained->references.size() != 3 * n) {
    throw std::runtime_error("ComputedTorqueController exports " + std::to_string(chained->references.size()) +
                             " reference interfaces, expected " + std::to_string(3 * n));
  }
  subjects.push_back({"ComputedTorqueController (chained)", "controller",
    [&, chained](int64_t k) {
      moving_state(k + 10, qr, qdr);  // the reference a little ahead of the state
      moving_state(k, q, qd);
      for (size_t i = 0; i < n; ++i) {
        chained->references[i]->set_value(qr[i]);
        chained->references[n + i]->set_value(qdr[i]);
        chained->references[2 * n + i]->set_value(0.0);
      }
      chained->set_state(q, qd);
    },
    [chained](int64_t k) {
      return chained->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK;
    }, {}, 0});

  // -- collision monitor --
  ParamsFile monitor_params(urdf, head + "    thresholds: [1.0e9]\n");
  auto monitor = std::make_shared<Harness<robot_dynamics_control::CollisionMonitorController>>(
    "collision_monitor", monitor_params.path(), urdf, true);
  monitor->activate();
  subjects.push_back({"CollisionMonitorController (chained)", "controller",
    [&, monitor](int64_t k) {
      moving_state(k, q, qd);
      for (size_t i = 0; i < n; ++i) {  // an effort stream of the controller in front
        monitor->references[i]->set_value(5.0 * q[i]);
      }
      monitor->set_state(q, qd);
    },
    [monitor](int64_t k) {
      return monitor->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK;
    }, {}, 0});

  // -- task space: the model's last frame (the iiwa14's iiwa_link_ee) held against the moving state --
  const std::string frame_line = "    frame: " + engine->frame_names().back() + "\n";
  ParamsFile impedance_params(urdf, head + frame_line + "    stiffness: [1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0]\n");
  auto impedance = std::make_shared<Harness<robot_dynamics_control::CartesianImpedanceController>>(
    "cartesian_impedance", impedance_params.path(), urdf);
  ParamsFile osc_params(urdf, head + frame_line + "    omega: [20.0, 20.0, 20.0, 20.0, 20.0, 20.0]\n");
  auto osc = std::make_shared<Harness<robot_dynamics_control::OperationalSpaceController>>(
    "operational_space", osc_params.path(), urdf);
  moving_state(0, q, qd);
  impedance->set_state(q, qd);
  impedance->activate();  // holds the frame's pose at the first state
  osc->set_state(q, qd);
  osc->activate();
  subjects.push_back({"CartesianImpedanceController", "controller",
    [&, impedance](int64_t k) { moving_state(k, q, qd); impedance->set_state(q, qd); },
    [impedance](int64_t k) {
      return impedance->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK;
    }, {}, 0});
  subjects.push_back({"OperationalSpaceController", "controller",
    [&, osc](int64_t k) { moving_state(k, q, qd); osc->set_state(q, qd); },
    [osc](int64_t k) { return osc->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK; },
    {}, 0});

  // -- the peers ---------------------------------------------------------------------------------
#ifdef RD_BENCH_HAVE_EFFORT_CONTROLLERS
  ParamsFile effort_params(urdf, "    joints: " + yaml_list(joints) + "\n    interface_name: effort\n");
  auto effort = std::make_shared<Harness<EffortPeer>>("joint_group_effort_controller", effort_params.path(), urdf);
  effort->activate();
  subjects.push_back({"JointGroupEffortController", "peer",
    [&, effort](int64_t k) {
      if (k % 10 == 0) {  // a command stream at a tenth of the loop's rate
        moving_state(k, q, qd);
        effort->controller->set_command(q);
      }
    },
    [effort](int64_t k) {
      return effort->update(kDt * static_cast<double>(k)) == controller_interface::return_type::OK;
    }, {}, 0});
#endif
  subjects.push_back({"rd_rnea", "engine",
    [&](int64_t k) { moving_state(k, q, qd); },
    [&](int64_t) {
      const rd_input in{q.data(), qd.data(), qdd.data(), nullptr, nullptr, 0};
      const rd_options with_friction{nullptr, 1, 0.0};
      return rd_rnea(&m, &in, &with_friction, tau.data(), &w) == RD_OK;
    }, {}, 0});
  subjects.push_back({"rd_gravity_compensation", "engine",
    [&](int64_t k) { moving_state(k, q, qd); },
    [&](int64_t) { return rd_gravity_compensation(&m, q.data(), qd.data(), 1, tau.data(), &w) == RD_OK; }, {}, 0});
  const std::vector<double> goal_q = sine_trajectory(joints, 1, 0.5).points[0].positions;
  const std::vector<double> zero(n, 0.0);
  subjects.push_back({"rd_pd_gravity", "engine",
    [&](int64_t k) { moving_state(k, q, qd); },
    [&](int64_t) {
      const rd_pd_gains gains{kp.data(), kd.data()};
      const rd_reference reference{goal_q.data(), zero.data(), nullptr};
      return rd_pd_gravity(&m, &gains, q.data(), qd.data(), &reference, tau.data(), &w) == RD_OK;
    }, {}, 0});
  rd_computed_torque_options ct_options{};
  ct_options.kp = kp.data();
  ct_options.kd = kd.data();
  subjects.push_back({"rd_computed_torque", "engine",
    [&](int64_t k) { moving_state(k + 10, qr, qdr); moving_state(k, q, qd); },
    [&](int64_t) {
      const rd_reference reference{qr.data(), qdr.data(), qddr.data()};
      return rd_computed_torque(&m, &ct_options, q.data(), qd.data(), &reference, tau.data(), &w) == RD_OK;
    }, {}, 0});
  // -- collision monitor: the observer alone --
  std::vector<std::vector<double>> obs_state(8, std::vector<double>(n, 0.0));
  const std::vector<double> obs_gain(n, 100.0), obs_threshold(n, 1.0e9), obs_relative(n, 0.05);
  rd_observer_options obs_options{obs_gain.data(), obs_threshold.data(), obs_relative.data(), nullptr, 1, 0.0, 1};
  rd_observer observer{obs_state[0].data(), obs_state[1].data(), obs_state[2].data(), obs_state[3].data(),
                       obs_state[4].data(), obs_state[5].data(), obs_state[6].data(), obs_state[7].data(),
                       0.0, 0, 0, -1};
  rd_momentum_observer_reset(&observer, static_cast<int>(n));
  subjects.push_back({"rd_momentum_observer_update", "engine",
    [&](int64_t k) {
      moving_state(k, q, qd);
      for (size_t i = 0; i < n; ++i) {
        tau[i] = 5.0 * q[i];
      }
    },
    [&](int64_t k) {
      return rd_momentum_observer_update(&m, &obs_options, &observer, kDt * static_cast<double>(k + 1), q.data(),
                                         qd.data(), tau.data(), &w) == RD_OK;
    }, {}, 0});
  // -- Cartesian impedance: the engine's law alone, and the CRISP-style law on Pinocchio --
  std::shared_ptr<CompliantLaw> compliant;
  if (robot == kCompliantRobot) {
    std::vector<double> q0(n), qd0(n);
    moving_state(0, q0, qd0);
    compliant = robot_dynamics_control::bench::compliant_law(m, w, q0, urdf, joints);
    subjects.push_back({"rd_compliant_control", "engine",
      [compliant](int64_t k) { moving_state(k, compliant->q, compliant->qd); },
      [&, compliant](int64_t) {
        return rd_compliant_control(&m, &compliant->o, &compliant->in, compliant->tau.data(), nullptr, &w) == RD_OK;
      }, {}, 0});
#ifdef RD_BENCH_HAVE_PINOCCHIO
    subjects.push_back({kCrispName, "peer",
      [compliant](int64_t k) { moving_state(k, compliant->q, compliant->qd); },
      [compliant](int64_t) { return compliant->crisp->update(compliant->q.data(), compliant->qd.data()); }, {}, 0});
#endif
  }
  subjects.push_back({"clock_gettime (empty timed part)", "timer", [](int64_t) {}, [](int64_t) { return true; }, {}, 0});

  // -- the timing thread pinned (--cpu), the controllers' publisher threads left free -------------
  pin_timing_thread(opt.cpu);

  // -- warm-up, then interleaved rounds ---------------------------------------------------------
  const int64_t last = total - 1;  // the last call of each subject
  for (auto & s : subjects) {
    s.ns.reserve(static_cast<size_t>(opt.calls));
    for (; s.next < opt.warmup; ++s.next) {
      s.prepare(s.next);
      if (!s.call(s.next)) {
        throw std::runtime_error(s.name + " failed in the warm-up on " + robot);
      }
    }
  }
  for (int r = 0; r < opt.rounds; ++r) {
    const int64_t end = opt.warmup + opt.calls * (r + 1) / opt.rounds;
    for (auto & s : subjects) {
      for (; s.next < end; ++s.next) {
        s.prepare(s.next);
        const int64_t t0 = now_ns();
        const bool ok = s.call(s.next);
        const int64_t t1 = now_ns();
        if (!ok) {
          throw std::runtime_error(s.name + " failed at call " + std::to_string(s.next) + " on " + robot);
        }
        s.ns.push_back(t1 - t0);
      }
    }
  }
  // -- the timed calls did the work: no controller fell back to its fault output, and the gravity
  // compensation's efforts are the engine's for the last state (clipped to the limits)
  for (const auto & [name, status] : {std::pair{"GravityCompensationController", gravity->controller->core().status()},
         std::pair{"PdGravityController", pd->controller->core().status()},
         std::pair{"ComputedTorqueController", ct->controller->core().status()},
         std::pair{"ComputedTorqueController (chained)", chained->controller->core().status()}}) {
    if (status & robot_dynamics_control::TICK_FAULT) {
      throw std::runtime_error(std::string(name) + " ended in its fault output on " + robot);
    }
  }
  moving_state(last, q, qd);
  if (rd_gravity_compensation(&m, q.data(), qd.data(), 1, tau.data(), &w) != RD_OK) {
    throw std::runtime_error("rd_gravity_compensation failed on " + robot);
  }
  for (size_t i = 0; i < n; ++i) {
    const double limit = engine->effort_limits()[i];
    const double expected = std::min(limit, std::max(-limit, tau[i]));
    if (!(std::abs(gravity->command_values[i] - expected) <= 1e-9 * (1.0 + std::abs(expected)))) {
      throw std::runtime_error("GravityCompensationController's effort on " + joints[i] + " is " +
                               std::to_string(gravity->command_values[i]) + ", the engine's " + std::to_string(expected));
    }
  }
  for (auto & s : subjects) {  // allocations counted in 1,000 more calls, untimed
    long allocations = 0;
    for (int k = 0; k < 1000; ++k, ++s.next) {
      s.prepare(s.next);
      allocations += robot_dynamics_control::test::count_allocations([&] { s.call(s.next); });
    }
    rows.push_back({robot, s.name, s.kind, stats_of(s.ns), allocations});
  }
#ifdef RD_BENCH_HAVE_PINOCCHIO
  if (compliant) {
    std::vector<std::vector<double>> qs, qds;  // five states of the run
    for (const int64_t k : {0, 777, 2500, 6100, 13000}) {
      qs.emplace_back(n);
      qds.emplace_back(n);
      moving_state(k, qs.back(), qds.back());
    }
    const double worst = robot_dynamics_control::bench::check_crisp(m, w, *compliant, qs, qds);
    std::printf("check: %s, given rd_compliant_control's damping, on 5 states of %s: torques within %.1e of max |tau| "
                "(1e-6 allowed)\n", kCrispName, robot.c_str(), worst);
  }
#endif
}

const Row * find(const std::vector<Row> & rows, const std::string & robot, const std::string & name)
{
  for (const auto & r : rows) {
    if (r.robot == robot && r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace

int main(int argc, char ** argv)
{
  Options opt;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    if (a == "-h" || a == "--help") {
      std::printf(
        "bench_update: the cost of update() per controller, with its peers\nusage: bench_update [--calls N] "
        "[--warmup W] [--robot puma560|three_dof_geared|iiwa14|all] [--rounds R] [--cpu K]\n");
      return 0;
    }
    if (k + 1 >= argc) {
      return usage("option " + a + " needs a value");
    }
    const std::string v = argv[++k];
    char * end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    const bool integer = !v.empty() && *end == '\0';
    if (a == "--calls" && integer && x >= 100) {
      opt.calls = x;
    } else if (a == "--warmup" && integer && x >= 0) {
      opt.warmup = x;
    } else if (a == "--rounds" && integer && x >= 1) {
      opt.rounds = static_cast<int>(x);
    } else if (a == "--cpu" && integer && x >= 0) {
      opt.cpu = static_cast<int>(x);
    } else if (a == "--robot" && (v == "all" || std::find(std::begin(kRobots), std::end(kRobots), v) != std::end(kRobots))) {
      opt.robots = v == "all" ? std::vector<std::string>{std::begin(kRobots), std::end(kRobots)} : std::vector<std::string>{v};
    } else if (a == "--robot") {
      return usage("unknown robot '" + v + "': puma560, three_dof_geared, iiwa14 or all");
    } else if (a == "--calls" || a == "--warmup" || a == "--rounds" || a == "--cpu") {
      return usage("bad value '" + v + "' for " + a);
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  if (opt.rounds > opt.calls) {
    return usage("--rounds must not exceed --calls");
  }
  if (opt.cpu >= 0) {  // checked here; bench_robot pins the timing thread once the controllers exist
    cpu_set_t set;
    CPU_ZERO(&set);
    if (opt.cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(set), &set) != 0 || !CPU_ISSET(opt.cpu, &set)) {
      return usage("cannot pin to core " + std::to_string(opt.cpu));
    }
  }

  rclcpp::init(argc, argv);
  std::vector<Row> rows;
  int rc = 0;
  try {
    for (const auto & robot : opt.robots) {
      bench_robot(robot, opt, rows);
    }
  } catch (const std::exception & e) {
    std::fprintf(stderr, "bench_update: %s\n", e.what());
    rc = 1;
  }
  rclcpp::shutdown();
  if (rc != 0) {
    return rc;
  }

  const char * effort_name = "JointGroupEffortController";
  // ours / CRISP-style: of our controllers and of the engine's law alone
  auto against_crisp = [](const Row & r) { return r.kind == "controller" || r.name == "rd_compliant_control"; };
  std::printf(
    "update() per call [us]: %lld calls after %lld warm-up, %d interleaved rounds, clock_gettime(CLOCK_MONOTONIC) "
    "around each call; ros2_control %s\n",
    static_cast<long long>(opt.calls), static_cast<long long>(opt.warmup), opt.rounds, CONTROLLER_INTERFACE_VERSION_STR);
  std::printf("%-17s %-44s %8s %8s %8s %8s %8s %6s %9s %9s %9s %9s %10s %10s %6s\n", "robot", "subject", "p50", "p99",
    "p99.9", "max", "mean", ">20us", "p50/rnea", "p99/rnea", "p50/JGEC", "p99/JGEC", "p50/CRISP", "p99/CRISP", "allocs");
  auto ratio = [](double a, const Row * b, double Stats::*f) { return b ? a / (b->s.*f) : std::nan(""); };
  for (const auto & r : rows) {
    const Row * rnea = find(rows, r.robot, "rd_rnea");
    const Row * effort = find(rows, r.robot, effort_name);
    const Row * crisp = find(rows, r.robot, kCrispName);
    std::printf("%-17s %-44s %8.3f %8.3f %8.3f %8.2f %8.3f %6lld", r.robot.c_str(), r.name.c_str(), r.s.p50, r.s.p99,
      r.s.p999, r.s.max, r.s.mean, static_cast<long long>(r.s.over_goal));
    if (r.kind == "controller") {
      std::printf(" %9.2f %9.2f %9.2f %9.2f", ratio(r.s.p50, rnea, &Stats::p50), ratio(r.s.p99, rnea, &Stats::p99),
        ratio(r.s.p50, effort, &Stats::p50), ratio(r.s.p99, effort, &Stats::p99));
    } else {
      std::printf(" %9s %9s %9s %9s", "", "", "", "");
    }
    if (against_crisp(r) && crisp) {
      std::printf(" %10.3f %10.3f", ratio(r.s.p50, crisp, &Stats::p50), ratio(r.s.p99, crisp, &Stats::p99));
    } else {
      std::printf(" %10s %10s", "", "");
    }
    std::printf(" %6ld\n", r.allocations);
  }
  for (const auto & r : rows) {  // JSON lines; ratios of our controllers only (else, or without the peer: null)
    const bool ours = r.kind == "controller";
    const Row * rnea = ours ? find(rows, r.robot, "rd_rnea") : nullptr;
    const Row * effort = ours ? find(rows, r.robot, effort_name) : nullptr;
    const Row * crisp = against_crisp(r) ? find(rows, r.robot, kCrispName) : nullptr;
    auto num = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.4f", x);
      return std::isfinite(x) ? std::string(b) : std::string("null");
    };
    std::printf(
      "{\"robot\": \"%s\", \"subject\": \"%s\", \"kind\": \"%s\", \"calls\": %lld, \"warmup\": %lld, "
      "\"p50_us\": %s, \"p99_us\": %s, \"p999_us\": %s, \"max_us\": %s, \"mean_us\": %s, \"over_20us\": %lld, "
      "\"ratio_rnea_p50\": %s, \"ratio_rnea_p99\": %s, \"ratio_jgec_p50\": %s, \"ratio_jgec_p99\": %s, "
      "\"ratio_crisp_p50\": %s, \"ratio_crisp_p99\": %s, "
      "\"allocations_in_1000_calls\": %ld, \"ros2_control\": \"%s\"}\n",
      r.robot.c_str(), r.name.c_str(), r.kind.c_str(), static_cast<long long>(opt.calls),
      static_cast<long long>(opt.warmup), num(r.s.p50).c_str(), num(r.s.p99).c_str(), num(r.s.p999).c_str(),
      num(r.s.max).c_str(), num(r.s.mean).c_str(), static_cast<long long>(r.s.over_goal), num(ratio(r.s.p50, rnea, &Stats::p50)).c_str(),
      num(ratio(r.s.p99, rnea, &Stats::p99)).c_str(), num(ratio(r.s.p50, effort, &Stats::p50)).c_str(),
      num(ratio(r.s.p99, effort, &Stats::p99)).c_str(), num(ratio(r.s.p50, crisp, &Stats::p50)).c_str(),
      num(ratio(r.s.p99, crisp, &Stats::p99)).c_str(), r.allocations, CONTROLLER_INTERFACE_VERSION_STR);
  }
  return 0;
}
