// The fuzzer of one controller, Fuzzer<C> (it counts allocations: include it in one translation unit
// of an executable, allocation_counter.hpp): its configurations, its random values and actions,
// and the checks after every update() (test_fuzz_controllers.cpp's header says which).
#ifndef ROBOT_DYNAMICS_CONTROL__FUZZER_HPP_
#define ROBOT_DYNAMICS_CONTROL__FUZZER_HPP_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "fuzz_support.hpp"

namespace rd_fuzz
{

using robot_dynamics_control::test::count_allocations;

template<typename C>
class Fuzzer
{
public:
  static constexpr Law kLaw = law_of<C>();
  /// Steps between two configurations (a configuration takes a large part of a second: the model's
  /// conversion).
  static constexpr long kStepsPerConfiguration = 1500;

  Fuzzer(const std::string & controller, const Robot & robot, const Robot & other, uint64_t seed, long budget)
  : name_(controller), robot_(robot), other_(other), rng_(seed), budget_(budget), q_(robot.n()), qd_(robot.n())
  {
  }

  void run()
  {
    params_ = describe();
    make_harness(true);
    for (step_ = 0; step_ < budget_ && !broken_; ++step_) {
      if (step_ > 0 && step_ % kStepsPerConfiguration == 0) {
        probe();
        make_harness(false);
      }
      act();
      if (!broken_) {
        tick();
      }
    }
    if (!broken_) {
      probe();
    }
  }

  const Findings & findings() const { return findings_; }

  /// What the run did, for the log: "<what> <accepted>/<tried>" each.
  std::string summary() const
  {
    std::string s;
    for (const auto & [what, n] : tally_) {
      s += (s.empty() ? "" : ", ") + what + " " + std::to_string(n.first) + "/" + std::to_string(n.second);
    }
    return s;
  }

private:
  // -- configuration -------------------------------------------------------------------------------

  /// The controller's parameters as it declares them. The controller manager declares every
  /// parameter of the parameters file before the controller does (its node options: undeclared
  /// parameters allowed, declared from the overrides), which leaves those without the controller's
  /// descriptor; a controller initialised without that declaration describes them all.
  std::vector<ParamInfo> describe()
  {
    ParamsFile file(robot_.urdf, configuration(false));
    auto controller = std::make_shared<C>();
    rclcpp::NodeOptions options;
    options.allow_undeclared_parameters(true).arguments({"--ros-args", "--params-file", file.path()});
#if CONTROLLER_INTERFACE_VERSION_MAJOR >= 4
    const auto rc = controller->init(name_, robot_.urdf, 100, "", options);
#else
    const auto rc = controller->init(name_, "", options);
#endif
    if (rc != controller_interface::return_type::OK) {
      findings_.add("the baseline configuration refused at init", step_, "");
      return {};
    }
    return discover(*controller->get_node());
  }

  /// A parameters file body: the baseline (the robot's joints, shuffled, and drive train; PD gains),
  /// or, for `hostile`, that with random values for some of the discovered parameters.
  std::string configuration(bool hostile)
  {
    std::map<std::string, std::string> values;
    auto joints = robot_.joints;
    rng_.shuffle(joints);
    values["joints"] = yaml(rclcpp::ParameterValue(joints));
    values["drivetrain"] = yaml(rclcpp::ParameterValue(robot_.drivetrain));
    if (kLaw == Law::task) {
      values["frame"] = robot_.tip;
    }
    if (kLaw == Law::pd) {
      values["kp"] = yaml(rclcpp::ParameterValue(std::vector<double>{rng_.log_uniform(10.0, 300.0)}));
      values["kd"] = yaml(rclcpp::ParameterValue(std::vector<double>{rng_.log_uniform(1.0, 30.0)}));
    }
    if (rng_.chance(0.3)) {  // effort limits of the configuration (ordered as joints), below the URDF's
      std::vector<double> limits;
      for (const auto & joint : joints) {
        const double e = robot_.effort[static_cast<size_t>(robot_.index(joint))];
        limits.push_back(std::isfinite(e) ? rng_.uniform(0.1, 1.0) * e : rng_.uniform(1.0, 100.0));
      }
      values["effort_limits"] = yaml(rclcpp::ParameterValue(limits));
    }
    if (hostile) {
      for (const auto & p : params_) {
        if (p.name == "robot_model" || !rng_.chance(0.15)) {
          continue;
        }
        if (p.name == "drivetrain") {
          values[p.name] = yaml(rclcpp::ParameterValue(rng_.pick(std::vector<std::string>{
            "", other_.drivetrain, robot_.drivetrain + ".missing", std::string(300, 'd')})));
        } else {
          values[p.name] = yaml(value_for(p, rng_.chance(0.8)));
        }
      }
    }
    std::string body;
    for (const auto & [name, value] : values) {
      if (!value.empty()) {
        body += "    " + name + ": " + value + "\n";
      }
    }
    return body;
  }

  /// A new controller: a random configuration (the baseline when `baseline`, or after 4 refused),
  /// a random state, activated.
  void make_harness(bool baseline)
  {
    h_.reset();
    for (int attempt = 0; attempt < 5 && !h_; ++attempt) {
      const std::string body = configuration(!baseline && attempt < 4 && rng_.chance(0.4));
      const bool chained = (kLaw == Law::ct || kLaw == Law::task) && rng_.chance(0.5);
      file_ = std::make_unique<ParamsFile>(robot_.urdf, body);
      std::string flat = body;
      std::replace(flat.begin(), flat.end(), '\n', ';');
      try {
        ++tally_["configurations"].second;
        h_ = std::make_unique<Harness<C>>(name_, file_->path(), robot_.urdf, chained);
        ++tally_["configurations"].first;
        configuration_ = std::string("configured") + (chained ? " (chained)" : "") + ":" + flat;
        journal.add(step_, configuration_);
      } catch (const std::runtime_error & e) {
        journal.add(step_, std::string("configuration refused (") + e.what() + "):" + flat);
        if (baseline || attempt == 4) {
          findings_.add("the baseline configuration refused", step_, e.what());
        }
      }
    }
    if (!h_) {
      broken_ = true;
      return;
    }
    // the state interfaces by joint, the joint of each command
    position_at_.assign(robot_.n(), -1);
    velocity_at_.assign(robot_.n(), -1);
    for (size_t k = 0; k < h_->state_names.size(); ++k) {
      const auto & s = h_->state_names[k];
      const int j = robot_.index(s.substr(0, s.rfind('/')));
      if (j >= 0) {
        (s.substr(s.rfind('/') + 1) == "position" ? position_at_ : velocity_at_)[static_cast<size_t>(j)] =
          static_cast<int>(k);
      }
    }
    command_joint_.clear();
    for (const auto & c : h_->controller->command_interface_configuration().names) {
      command_joint_.push_back(robot_.index(c.substr(0, c.rfind('/'))));
    }
    configured_.clear();
    for (const auto & p : params_) {
      if (!p.read_only && h_->controller->get_node()->has_parameter(p.name)) {
        configured_.push_back(h_->controller->get_node()->get_parameter(p.name));
      }
    }
    configured_limits();
    latching_configured_ = latching_param_set();
    random_state(rng_.chance(0.2) ? 0.5 : 0.0);
    activate();
  }

  /// What the checks depend on, from the configuration (read-only parameters): the effort limit of
  /// each command and whether stop_behaviour is "brake".
  void configured_limits()
  {
    auto node = h_->controller->get_node();
    std::vector<double> by_joint = robot_.effort;
    std::vector<double> given;
    std::vector<std::string> joints;
    if (node->has_parameter("effort_limits") && node->has_parameter("joints")) {
      const auto e = node->get_parameter("effort_limits");
      const auto j = node->get_parameter("joints");
      if (e.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY &&
          j.get_type() == rclcpp::ParameterType::PARAMETER_STRING_ARRAY) {
        given = e.as_double_array();
        joints = j.as_string_array();
      }
    }
    if (!given.empty() && given.size() == joints.size()) {
      for (size_t i = 0; i < joints.size(); ++i) {
        if (robot_.index(joints[i]) >= 0) {
          by_joint[static_cast<size_t>(robot_.index(joints[i]))] = given[i];
        }
      }
    }
    limit_.clear();
    for (int j : command_joint_) {
      limit_.push_back(j >= 0 ? by_joint[static_cast<size_t>(j)] : kInf);
    }
    brake_ = node->has_parameter("stop_behaviour") &&
             node->get_parameter("stop_behaviour").get_type() == rclcpp::ParameterType::PARAMETER_STRING &&
             node->get_parameter("stop_behaviour").as_string() == "brake";
  }

  /// Whether a parameter that latches a fault until the next activation is on: the specified
  /// max_tracking_error, nonzero.
  bool latching_param_set() const
  {
    auto node = h_->controller->get_node();
    if (!node->has_parameter("max_tracking_error")) {
      return false;
    }
    const auto v = node->get_parameter("max_tracking_error");
    if (v.get_type() != rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY) {
      return v.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE && v.as_double() != 0.0;
    }
    const auto a = v.as_double_array();
    return std::any_of(a.begin(), a.end(), [](double x) { return x != 0.0; });
  }

  // -- values --------------------------------------------------------------------------------------

  /// A gain-like number: mostly positive and moderate, else hostile.
  double element(bool sane)
  {
    if (sane || rng_.chance(0.6)) {
      return rng_.chance(0.1) ? 0.0 : rng_.log_uniform(1e-3, 1e3);
    }
    return rng_.pick(kHostile);
  }

  /// A joint's value between lo and hi, now and then just outside them or hostile.
  double joint_value(double lo, double hi, double hostile)
  {
    const double r = rng_.uniform();
    if (r < hostile) {
      return rng_.pick(kHostile);
    }
    if (r < hostile + 0.05) {
      return rng_.chance(0.5) ? lo - rng_.log_uniform(1e-6, 10.0) : hi + rng_.log_uniform(1e-6, 10.0);
    }
    return rng_.uniform(lo, hi);
  }

  std::vector<std::string> joint_names()
  {
    auto names = robot_.joints;
    rng_.shuffle(names);
    switch (rng_.below(12)) {
      case 0: names.pop_back(); break;                             // a joint missing
      case 1: names.back() = names.front(); break;                 // one twice, one missing
      case 2: names.push_back(names.front()); break;               // one twice
      case 3: names.push_back("joint" + std::to_string(robot_.n() + 1)); break;  // unknown
      case 4: names.front() = rng_.pick(std::vector<std::string>{"", "JOINT1", std::string(300, 'j')}); break;
      case 5: names.clear(); break;
      default: break;
    }
    return names;
  }

  /// A value for parameter `p` (its type, or now and then another), sane or hostile.
  rclcpp::ParameterValue value_for(const ParamInfo & p, bool sane)
  {
    uint8_t type = p.type;
    if (!sane && rng_.chance(0.15)) {
      type = rng_.pick(std::vector<uint8_t>{
        ParameterType::PARAMETER_BOOL, ParameterType::PARAMETER_INTEGER, ParameterType::PARAMETER_DOUBLE,
        ParameterType::PARAMETER_STRING, ParameterType::PARAMETER_DOUBLE_ARRAY, ParameterType::PARAMETER_STRING_ARRAY,
        ParameterType::PARAMETER_INTEGER_ARRAY, ParameterType::PARAMETER_BOOL_ARRAY});
    }
    const size_t n = robot_.n();
    switch (type) {
      case ParameterType::PARAMETER_BOOL: return rclcpp::ParameterValue(rng_.chance(0.5));
      case ParameterType::PARAMETER_INTEGER:
        return rclcpp::ParameterValue(rng_.pick(std::vector<int64_t>{
          0, 1, -1, 2, 100, 1000, static_cast<int64_t>(rng_.below(200)), std::numeric_limits<int64_t>::max(),
          std::numeric_limits<int64_t>::min()}));
      case ParameterType::PARAMETER_DOUBLE: return rclcpp::ParameterValue(element(sane));
      case ParameterType::PARAMETER_STRING: {
        std::vector<std::string> words = p.words;
        if (!sane || words.empty()) {
          words.insert(words.end(), {"", " ", "x", std::string(300, 's'), "h\xc3\xb6ld", "nan"});
        }
        return rclcpp::ParameterValue(rng_.pick(words));
      }
      case ParameterType::PARAMETER_DOUBLE_ARRAY: {
        const size_t length = sane ? rng_.pick(std::vector<size_t>{1, n})
                                   : rng_.pick(std::vector<size_t>{0, 1, 2, n - 1, n, n, n + 1, 3 * n});
        std::vector<double> v(length);
        for (double & x : v) {
          x = element(sane);
        }
        return rclcpp::ParameterValue(v);
      }
      case ParameterType::PARAMETER_STRING_ARRAY: return rclcpp::ParameterValue(joint_names());
      case ParameterType::PARAMETER_INTEGER_ARRAY:
        return rclcpp::ParameterValue(std::vector<int64_t>(rng_.below(n + 2), 1));
      case ParameterType::PARAMETER_BOOL_ARRAY:
        return rclcpp::ParameterValue(std::vector<bool>(rng_.below(n + 2), true));
      default: return rclcpp::ParameterValue(0.0);
    }
  }

  // -- actions -------------------------------------------------------------------------------------

  void write_state()
  {
    for (size_t j = 0; j < robot_.n(); ++j) {
      if (position_at_[j] >= 0) {
        h_->state_values[static_cast<size_t>(position_at_[j])] = q_[j];
      }
      if (velocity_at_[j] >= 0) {
        h_->state_values[static_cast<size_t>(velocity_at_[j])] = qd_[j];
      }
    }
  }

  /// A new measured state: each joint's value hostile with probability `hostile`.
  void random_state(double hostile)
  {
    for (size_t j = 0; j < robot_.n(); ++j) {
      q_[j] = joint_value(robot_.lower[j], robot_.upper[j], hostile);
      qd_[j] = joint_value(-robot_.velocity[j], robot_.velocity[j], hostile);
    }
    write_state();
    journal.add(step_, "state q " + format(q_) + " qd " + format(qd_));
  }

  /// A state well within the limits, at rest.
  void sane_state()
  {
    for (size_t j = 0; j < robot_.n(); ++j) {
      const double middle = 0.5 * (robot_.lower[j] + robot_.upper[j]);
      const double half = 0.25 * (robot_.upper[j] - robot_.lower[j]);
      q_[j] = rng_.uniform(middle - half, middle + half);
      qd_[j] = 0.0;
    }
    write_state();
    journal.add(step_, "sane state q " + format(q_) + " qd " + format(qd_));
  }

  /// The previous state moved a little (a joint hostile now and then).
  void nudge_state()
  {
    const size_t j = rng_.below(robot_.n());
    if (rng_.chance(0.1)) {
      (rng_.chance(0.5) ? q_ : qd_)[j] = rng_.pick(kHostile);
    } else {
      for (size_t i = 0; i < robot_.n(); ++i) {
        q_[i] = std::isfinite(q_[i]) ? q_[i] + rng_.uniform(-0.01, 0.01)
                                     : rng_.uniform(robot_.lower[i], robot_.upper[i]);
        qd_[i] = std::isfinite(qd_[i]) ? qd_[i] + rng_.uniform(-0.1, 0.1) : 0.0;
      }
    }
    write_state();
    journal.add(step_, "state q " + format(q_) + " qd " + format(qd_));
  }

  /// Sets 1 to 3 parameters (mostly writable ones) to random values, by set_parameter,
  /// set_parameters or set_parameters_atomically.
  void change_parameters()
  {
    std::vector<const ParamInfo *> writable, all;
    for (const auto & p : params_) {
      all.push_back(&p);
      if (!p.read_only) {
        writable.push_back(&p);
      }
    }
    const size_t count = rng_.pick(std::vector<size_t>{1, 1, 1, 2, 3});
    std::vector<rclcpp::Parameter> parameters;
    for (size_t k = 0; k < count; ++k) {
      const ParamInfo & p = *(writable.empty() || rng_.chance(0.15) ? rng_.pick(all) : rng_.pick(writable));
      parameters.emplace_back(p.name, value_for(p, rng_.chance(0.4)));
    }
    auto node = h_->controller->get_node();
    const int how = parameters.size() == 1 ? 0 : 1 + static_cast<int>(rng_.below(2));
    std::vector<rcl_interfaces::msg::SetParametersResult> results;
    std::string line = how == 2 ? "set_parameters_atomically" : how == 1 ? "set_parameters" : "set_parameter";
    for (const auto & p : parameters) {
      line += " " + p.get_name() + "=" + format(p.get_parameter_value());
    }
    try {
      if (how == 0) {
        results.push_back(node->set_parameter(parameters[0]));
      } else if (how == 1) {
        results = node->set_parameters(parameters);
      } else {
        results.assign(parameters.size(), node->set_parameters_atomically(parameters));
      }
    } catch (const std::exception & e) {
      journal.add(step_, line + " -> threw " + e.what());
      findings_.add("set_parameters threw", step_, e.what());
      changed_ = true;  // set_parameters sets one after the other: those before the throw are set
      return;
    }
    for (size_t k = 0; k < results.size(); ++k) {
      line += results[k].successful ? " -> ok" : " -> refused (" + results[k].reason.substr(0, 80) + ")";
    }
    journal.add(step_, line);
    for (size_t k = 0; k < results.size(); ++k) {
      ++tally_["parameters"].second;
      if (!results[k].successful) {
        continue;
      }
      ++tally_["parameters"].first;
      changed_ = true;
      const auto info = std::find_if(
        params_.begin(), params_.end(), [&](const ParamInfo & p) { return p.name == parameters[k].get_name(); });
      if (info != params_.end() && info->read_only) {
        findings_.add(
          "a change of the read-only parameter '" + parameters[k].get_name() + "' accepted after configure", step_,
          parameters[k].get_name() + " = " + format(parameters[k].get_parameter_value()));
      }
      if (has_nonfinite(parameters[k].get_parameter_value())) {
        findings_.add(
          "a non-finite value of '" + parameters[k].get_name() + "' accepted", step_,
          parameters[k].get_name() + " = " + format(parameters[k].get_parameter_value()));
      }
    }
    latching_since_activation_ = latching_since_activation_ || latching_param_set();
  }

  /// A JointTrajectory with random names, points, values, times and stamp.
  trajectory_msgs::msg::JointTrajectory random_trajectory()
  {
    trajectory_msgs::msg::JointTrajectory msg;
    msg.joint_names = joint_names();
    const size_t m = msg.joint_names.size();
    const double r = rng_.uniform();
    const double stamp = r < 0.55 ? 0.0
                       : r < 0.7  ? t_ - rng_.log_uniform(1e-3, 10.0)    // in the past
                       : r < 0.75 ? rng_.uniform(0.0, 1.0)              // long past
                       : r < 0.9  ? t_ + rng_.log_uniform(1e-3, 10.0)    // in the future
                                  : 2.0e9;                               // far future
    msg.header.stamp.sec = static_cast<int32_t>(std::floor(stamp));
    msg.header.stamp.nanosec = static_cast<uint32_t>((stamp - std::floor(stamp)) * 1e9);
    const size_t points = rng_.chance(0.05) ? 0 : rng_.chance(0.05) ? 40 : 1 + rng_.below(4);
    const bool has_v = rng_.chance(0.5), has_a = has_v ? rng_.chance(0.5) : rng_.chance(0.05);
    const double hostile = rng_.chance(0.3) ? 0.1 : 0.0;
    double time = 0.0;
    for (size_t p = 0; p < points; ++p) {
      trajectory_msgs::msg::JointTrajectoryPoint point;
      time += rng_.chance(0.9) ? rng_.uniform(0.005, 0.5) : rng_.pick(std::vector<double>{0.0, -0.3, -2.0, 1e-9});
      int64_t ns = static_cast<int64_t>(std::llround(time * 1e9));
      point.time_from_start = rclcpp::Duration::from_nanoseconds(ns);
      if (rng_.chance(0.02)) {
        point.time_from_start.nanosec = 1500000000u;  // out of its range
      } else if (rng_.chance(0.01)) {
        point.time_from_start.sec = std::numeric_limits<int32_t>::max();
      }
      const auto length = [&](size_t want) {
        return rng_.chance(0.95) ? want : rng_.pick(std::vector<size_t>{0, want + 1, want > 0 ? want - 1 : 2});
      };
      for (size_t c = 0; c < length(m); ++c) {
        const int j = c < m ? robot_.index(msg.joint_names[c]) : -1;
        point.positions.push_back(
          j >= 0 ? joint_value(robot_.lower[static_cast<size_t>(j)], robot_.upper[static_cast<size_t>(j)], hostile)
                 : rng_.uniform(-1.0, 1.0));
      }
      if (has_v) {
        for (size_t c = 0, l = length(m); c < l; ++c) {
          point.velocities.push_back(joint_value(-2.0, 2.0, hostile));
        }
      }
      if (has_a) {
        for (size_t c = 0, l = length(m); c < l; ++c) {
          point.accelerations.push_back(joint_value(-20.0, 20.0, hostile));
        }
      }
      msg.points.push_back(point);
    }
    if (points > 1 && rng_.chance(0.05)) {
      std::swap(msg.points.front().time_from_start, msg.points.back().time_from_start);  // out of order
    }
    return msg;
  }

  /// What the controller's reference topic does with `msg`; "" when accepted.
  std::string send_reference(const trajectory_msgs::msg::JointTrajectory & msg)
  {
    std::string reason;
    try {
      if constexpr (kLaw == Law::pd) {
        reason = h_->controller->set_reference(msg);
      } else if constexpr (kLaw == Law::ct) {
        reason = h_->controller->set_trajectory(msg);
      }
    } catch (const std::exception & e) {
      journal.add(step_, "reference " + format(msg) + " -> threw " + e.what());
      findings_.add("the reference's conversion threw", step_, e.what());
      return e.what();
    }
    journal.add(
      step_, "reference " + format(msg) + (reason.empty() ? " -> ok" : " -> refused (" + reason.substr(0, 80) + ")"));
    ++tally_["references"].second;
    if (reason.empty()) {
      ++tally_["references"].first;
      referenced_ = referenced_since_activation_ = true;
    }
    return reason;
  }

  /// ~/target_pose of a task-space controller: a random target, hostile 10 % of the time.
  void send_target()
  {
    if constexpr (kLaw == Law::task) {
      const auto msg = random_target(rng_, robot_, 0.1);
      const std::string reason = h_->controller->set_target(msg);
      journal.add(step_, "target (" + format(msg.pose.position.x) + ", " + format(msg.pose.position.y) + ", " +
                           format(msg.pose.position.z) + "; w " + format(msg.pose.orientation.w) + "; '" +
                           msg.header.frame_id + "') -> " + (reason.empty() ? "ok" : "refused"));
      ++tally_["references"].second;
      tally_["references"].first += reason.empty() ? 1 : 0;
    }
  }

  /// Chained mode: random values on the reference interfaces (<joint>/position, velocity, acceleration;
  /// a task-space controller's <frame>/position.x ... angular_velocity.z).
  void write_references()
  {
    std::vector<double> v;
    for (auto & r : h_->references) {
      const std::string name = r->get_name();
      const std::string kind = name.substr(name.rfind('/') + 1);
      if (kLaw == Law::task) {
        v.push_back(random_task_reference(rng_, kind, 0.05));
        r->set_value(v.back());
        continue;
      }
      const std::string head = name.substr(0, name.rfind('/'));
      const int j = robot_.index(head.substr(head.rfind('/') + 1));
      double x = kNaN;  // not commanded
      if (!rng_.chance(0.3)) {
        const double lo = j < 0 ? -1.0 : kind == "position" ? robot_.lower[static_cast<size_t>(j)]
                        : kind == "velocity" ? -robot_.velocity[static_cast<size_t>(j)] : -20.0;
        const double hi = j < 0 ? 1.0 : kind == "position" ? robot_.upper[static_cast<size_t>(j)]
                        : kind == "velocity" ? robot_.velocity[static_cast<size_t>(j)] : 20.0;
        x = joint_value(lo, hi, 0.25);
      }
      r->set_value(x);
      v.push_back(x);
    }
    journal.add(step_, "reference interfaces " + format(v));
  }

  void check_efforts(const char * where)
  {
    for (size_t k = 0; k < h_->command_values.size(); ++k) {
      const double e = h_->command_values[k];
      const std::string joint = command_joint_[k] >= 0 ? robot_.joints[static_cast<size_t>(command_joint_[k])] : "?";
      if (std::isnan(e) && !brake_) {
        findings_.add(std::string("NaN effort from ") + where, step_, "joint '" + joint + "'");
      } else if (std::isinf(e)) {
        findings_.add(std::string("infinite effort from ") + where, step_, "joint '" + joint + "'");
      } else if (std::abs(e) > limit_[k]) {
        findings_.add(
          std::string("effort above its limit from ") + where, step_,
          "joint '" + joint + "': " + format(e) + ", limit " + format(limit_[k]));
      }
    }
  }

  void tick()
  {
    auto rc = controller_interface::return_type::OK;
    const long allocations = count_allocations([&] { rc = h_->update(t_); });
    t_ += 0.001;
    if (rc != controller_interface::return_type::OK) {
      findings_.add("update() returned ERROR", step_, "");
    }
    if (allocations != 0) {
      const char * after = changed_ ? "after a parameter change" : activated_ ? "after an activation"
                         : referenced_ ? "after a reference" : "on a new state";
      findings_.add(
        std::string("allocation in update() ") + after, step_, std::to_string(allocations) + " allocations and frees");
    }
    check_efforts("update()");
    changed_ = activated_ = referenced_ = false;
  }

  /// Activates, a second time on a sane state when refused.
  bool activate()
  {
    auto node = h_->controller->get_node();
    ++tally_["activations"].second;
    ++tally_["activations"].first;
    if (node->activate().id() != State::PRIMARY_STATE_ACTIVE) {
      journal.add(step_, "activation refused");
      sane_state();
      if (node->activate().id() != State::PRIMARY_STATE_ACTIVE) {
        --tally_["activations"].first;
        findings_.add("activation refused on a sane state", step_, "");
        broken_ = true;  // the case ends here
        return false;
      }
    }
    journal.add(step_, std::string("activated") + (h_->controller->is_in_chained_mode() ? " (chained)" : ""));
    check_efforts("on_activate");
    activated_ = true;
    referenced_since_activation_ = false;
    latching_since_activation_ = latching_configured_ || latching_param_set();
    return true;
  }

  /// Deactivates; a computed torque controller switches its chained mode now and then; a new
  /// state (hostile now and then); activates.
  void cycle()
  {
    auto node = h_->controller->get_node();
    if (node->deactivate().id() != State::PRIMARY_STATE_INACTIVE) {
      findings_.add("deactivation failed", step_, "");
    }
    journal.add(step_, "deactivated");
    check_efforts("on_deactivate");
    if constexpr (kLaw == Law::ct || kLaw == Law::task) {
      if (rng_.chance(0.5)) {
        const bool chained = !h_->controller->is_in_chained_mode();
        if (!h_->controller->set_chained_mode(chained)) {
          findings_.add("set_chained_mode refused while inactive", step_, "");
        }
        journal.add(step_, chained ? "chained mode" : "not chained");
      }
    }
    random_state(rng_.chance(0.5) ? 0.3 : 0.0);
    activate();
  }

  /// Back to the configured parameters and a sane state at rest (with a sane reference when one was
  /// accepted since the activation): after 0.1 s the controller must have left its fault. When only
  /// an activation clears it, the fault was latched: a finding, unless max_tracking_error was set.
  void probe()
  {
    auto node = h_->controller->get_node();
    const auto results = node->set_parameters(configured_);
    for (size_t k = 0; k < results.size(); ++k) {
      if (!results[k].successful) {
        findings_.add("the configured value of '" + configured_[k].get_name() + "' refused", step_, results[k].reason);
      }
    }
    changed_ = true;
    journal.add(step_, "probe: the configured parameters");
    sane_state();
    if constexpr (kLaw == Law::ct || kLaw == Law::task) {
      if (h_->controller->is_in_chained_mode()) {
        for (auto & r : h_->references) {
          r->set_value(kNaN);
        }
        journal.add(step_, "reference interfaces NaN (hold)");
      }
    }
    if (kLaw != Law::task && referenced_since_activation_ && !h_->controller->is_in_chained_mode()) {
      trajectory_msgs::msg::JointTrajectory msg;
      msg.joint_names = robot_.joints;
      msg.points.resize(1);
      msg.points[0].positions = q_;
      msg.points[0].time_from_start = rclcpp::Duration::from_seconds(0.05);
      const std::string reason = send_reference(msg);
      if (!reason.empty()) {
        findings_.add("a sane reference refused", step_, reason);
      }
    }
    for (int k = 0; k < 100; ++k) {
      tick();
    }
    ++tally_["probes"].second;
    if (!faulting(*h_->controller)) {
      ++tally_["probes"].first;
      journal.add(step_, "probe: no fault");
      return;
    }
    journal.add(step_, "probe: still faulting; deactivated and activated again");
    node->deactivate();
    if (activate()) {
      for (int k = 0; k < 20; ++k) {
        tick();
      }
      if (faulting(*h_->controller)) {
        findings_.add("faulting on a sane state after a new activation", step_, configuration_);
      } else {
        // only an activation cleared it: the tracking fault latches so by design (max_tracking_error);
        // noted in the journal, not judged
        journal.add(step_, std::string("probe: cleared by the activation") +
                             (latching_since_activation_ ? " (max_tracking_error set)" : ""));
      }
    }
  }

  /// One random action before a tick (an action the controller does not take leaves the tick alone).
  void act()
  {
    double r = rng_.uniform();
    const auto take = [&r](double weight) { return (r -= weight) < 0.0; };
    if (take(0.3)) {
      random_state(rng_.chance(0.3) ? 0.15 : 0.0);
    } else if (take(0.25)) {
      nudge_state();
    } else if (take(0.07)) {
      change_parameters();
    } else if (take(0.08)) {
      if (kLaw == Law::task) {
        send_target();
      } else if (kLaw != Law::gravity) {
        send_reference(random_trajectory());
      }
    } else if (take(0.1)) {
      if ((kLaw == Law::ct || kLaw == Law::task) && h_->controller->is_in_chained_mode()) {
        write_references();
      }
    } else if (take(0.01)) {
      cycle();
    } else if (take(0.005)) {
      probe();
    } else if (take(0.015)) {
      t_ += rng_.chance(0.5) ? rng_.log_uniform(1e-3, 10.0) : -0.001;  // a pause, or the same time again
      journal.add(step_, "time " + format(t_));
    }
  }

  std::string name_;
  const Robot & robot_;
  const Robot & other_;
  Random rng_;
  long budget_;
  long step_ = 0;
  double t_ = 1000.0;
  std::unique_ptr<ParamsFile> file_;
  std::string configuration_;                  // the journal's line of the configuration in use
  std::unique_ptr<Harness<C>> h_;
  std::vector<ParamInfo> params_;
  std::vector<rclcpp::Parameter> configured_;  // the writable parameters as configured
  std::vector<double> q_, qd_;                 // the measured state, URDF order
  std::vector<int> position_at_, velocity_at_;  // state_values index by joint (-1: none)
  std::vector<int> command_joint_;             // joint of each command
  std::vector<double> limit_;                  // effort limit of each command
  bool brake_ = false;
  bool broken_ = false;  // no controller to go on with
  bool changed_ = false, activated_ = false, referenced_ = false;  // since the last tick
  bool referenced_since_activation_ = false;
  bool latching_configured_ = false, latching_since_activation_ = false;
  Findings findings_;
  std::map<std::string, std::pair<long, long>> tally_;  // accepted and tried, by action
};

}  // namespace rd_fuzz

#endif  // ROBOT_DYNAMICS_CONTROL__FUZZER_HPP_
