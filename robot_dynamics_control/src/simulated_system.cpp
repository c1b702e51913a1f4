// The arm's dynamics as ros2_control hardware (see simulated_system.hpp).

#include "robot_dynamics_control/simulated_system.hpp"


#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <locale>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hardware_interface/types/hardware_interface_type_values.hpp"
#include "rclcpp/logging.hpp"
#include "robot_dynamics_control/engine_model.hpp"

namespace robot_dynamics_control
{
namespace
{
rclcpp::Logger logger() { return rclcpp::get_logger("robot_dynamics_control.SimulatedSystem"); }

std::string trim(const std::string & s)
{
  const auto a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) {
    return "";
  }
  return s.substr(a, s.find_last_not_of(" \t\r\n") - a + 1);
}

// A number as the URDF writes it (C locale), the whole text or an error naming `what`.
double parse_number(const std::string & text, const std::string & what)
{
  std::istringstream in(trim(text));
  in.imbue(std::locale::classic());
  double v = 0.0;
  in >> v;
  if (in.fail() || !in.eof()) {
    // "nan" and "inf" are not read by istream: strtod takes them
    const std::string t = trim(text);
    char * end = nullptr;
    v = std::strtod(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) {
      throw std::runtime_error(what + ": expected a number, got '" + text + "'");
    }
  }
  return v;
}

std::vector<double> parse_list(const std::string & text, const std::string & what)
{
  std::string t = text;
  std::replace(t.begin(), t.end(), ',', ' ');
  std::istringstream in(t);
  std::vector<double> out;
  for (std::string item; in >> item;) {
    out.push_back(parse_number(item, what));
  }
  return out;
}

bool parse_bool(const std::string & text, const std::string & what)
{
  std::string t = trim(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "1" || t == "yes" || t == "on") {
    return true;
  }
  if (t == "false" || t == "0" || t == "no" || t == "off") {
    return false;
  }
  throw std::runtime_error(what + ": expected true or false, got '" + text + "'");
}

std::string join(const std::vector<std::string> & names)
{
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i ? ", '" : "'") + names[i] + "'";
  }
  return out + "]";
}

const char * status_name(int status)
{
  switch (status) {
    case RD_BAD_SIZE: return "bad size";
    case RD_BAD_INPUT: return "non-finite input";
    case RD_BAD_OUTPUT: return "non-finite or diverged state";
    case RD_NOT_POSITIVE_DEFINITE: return "inertia matrix not positive definite";
    default: return status >= RD_SINGULAR ? "singular articulated inertia" : "engine error";
  }
}

const std::set<std::string> kStateInterfaces = {
  hardware_interface::HW_IF_POSITION, hardware_interface::HW_IF_VELOCITY, hardware_interface::HW_IF_EFFORT};
}  // namespace

// -- the hardware --------------------------------------------------------------------------------

SimulatedSystem::CallbackReturn SimulatedSystem::on_init(const hardware_interface::HardwareInfo & info)
{
  if (hardware_interface::SystemInterface::on_init(info) != CallbackReturn::SUCCESS) {
    return CallbackReturn::ERROR;
  }
  try {
    const PlantParameters p = read_parameters();
    // a physically impossible plant is refused unless allowed; a plant takes any effort: a missing
    // effort limit is the controllers' issue
    model_ = EngineModel::from_parameter(
      "the hardware parameter robot_model", p.robot_model, p.allow_nonphysical_model, true);
    nq_ = model_->nq();
    std::vector<double> initial = read_joints();
    if (!p.initial_positions.empty()) {
      initial = parse_list(p.initial_positions, "initial_positions");
      if (initial.size() != joints_.size()) {
        throw std::runtime_error("initial_positions: expected " + std::to_string(joints_.size()) +
                                 " values ordered as " + join(joints_) + ", got '" + p.initial_positions + "'");
      }
    }
    start_plant(initial, p);
    start_wrench(p);
    if (!p.external_torque_topic.empty() || !p.external_wrench_topic.empty()) {
      start_input(p);
    }
    RCLCPP_INFO(logger(), "'%s': %d joints, %d RK4 step(s) per period (at most %g s each), friction %s",
                info_.name.c_str(), nq_, substeps_, max_step_, p.friction ? "on" : "off");
  } catch (const std::exception & e) {
    RCLCPP_FATAL(logger(), "'%s': %s", info_.name.c_str(), e.what());
    return CallbackReturn::ERROR;
  }
  return CallbackReturn::SUCCESS;
}

SimulatedSystem::PlantParameters SimulatedSystem::read_parameters()
{
  const auto & hw = info_.hardware_parameters;
  auto param = [&hw](const std::string & name, const std::string & fallback) {
    const auto it = hw.find(name);
    return it == hw.end() ? fallback : trim(it->second);
  };
  static const std::set<std::string> known = {
    "robot_model", "substeps", "max_step", "friction", "coulomb_smoothing", "initial_positions",
    "allow_nonphysical_model", "simulated_external_torque_topic", "simulated_external_wrench_topic",
    "simulated_external_wrench_frame"};
  for (const auto & kv : hw) {
    if (!known.count(kv.first)) {
      throw std::runtime_error(
        "unknown hardware parameter '" + kv.first + "'; valid: " +
        join(std::vector<std::string>(known.begin(), known.end())));
    }
  }
  substeps_ = static_cast<int>(parse_number(param("substeps", "1"), "substeps"));
  if (!(substeps_ >= 1 && substeps_ <= max_substeps_) ||
      static_cast<double>(substeps_) != parse_number(param("substeps", "1"), "substeps")) {
    throw std::runtime_error("substeps: expected an integer in [1, 1000], got '" + param("substeps", "1") + "'");
  }
  max_step_ = parse_number(param("max_step", "0.005"), "max_step");
  if (!(max_step_ > 0.0 && max_step_ <= 0.1)) {
    throw std::runtime_error("max_step: expected a step in (0, 0.1] s, got '" + param("max_step", "") + "'");
  }
  PlantParameters p;
  p.friction = parse_bool(param("friction", "true"), "friction");
  p.allow_nonphysical_model = parse_bool(param("allow_nonphysical_model", "false"), "allow_nonphysical_model");
  p.smooth = parse_number(param("coulomb_smoothing", "0"), "coulomb_smoothing");
  if (!(p.smooth >= 0.0 && std::isfinite(p.smooth))) {
    throw std::runtime_error("coulomb_smoothing: expected a velocity >= 0 [rad/s], got '" +
                             param("coulomb_smoothing", "") + "'");
  }
  p.robot_model = param("robot_model", "");
  p.initial_positions = param("initial_positions", "");
  p.external_torque_topic = param("simulated_external_torque_topic", "");
  p.external_wrench_topic = param("simulated_external_wrench_topic", "");
  p.external_wrench_frame = param("simulated_external_wrench_frame", "");
  return p;
}

std::vector<double> SimulatedSystem::read_joints()
{
  const std::size_t n = info_.joints.size();
  std::vector<double> initial(n, 0.0);
  joints_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const auto & joint = info_.joints[i];
    joints_.push_back(joint.name);
    if (joint.command_interfaces.size() != 1 ||
        joint.command_interfaces[0].name != hardware_interface::HW_IF_EFFORT) {
      std::vector<std::string> names;
      for (const auto & c : joint.command_interfaces) {
        names.push_back(c.name);
      }
      throw std::runtime_error("joint '" + joint.name + "': expected one command interface 'effort', got " +
                               join(names));
    }
    for (const auto & s : joint.state_interfaces) {
      if (!kStateInterfaces.count(s.name)) {
        throw std::runtime_error("joint '" + joint.name + "': unknown state interface '" + s.name +
                                 "'; valid: ['position', 'velocity', 'effort']");
      }
      if (s.name == hardware_interface::HW_IF_POSITION && !trim(s.initial_value).empty()) {
        initial[i] = parse_number(s.initial_value, "joint '" + joint.name + "' position initial_value");
      }
    }
  }
  index_ = model_->indices_of(joints_);  // throws naming the model's joints
  std::vector<std::string> missing;
  for (int k = 0; k < nq_; ++k) {
    if (std::find(index_.begin(), index_.end(), k) == index_.end()) {
      missing.push_back(model_->joint_names()[static_cast<std::size_t>(k)]);
    }
  }
  if (!missing.empty() || static_cast<int>(n) != nq_) {
    throw std::runtime_error("the <ros2_control> block must list every joint of the model once, " +
                             join(model_->joint_names()) + "; missing " + join(missing));
  }
  return initial;
}

void SimulatedSystem::start_plant(const std::vector<double> & initial, const PlantParameters & p)
{
  const std::size_t n = joints_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(initial[i])) {
      throw std::runtime_error("initial position of joint '" + joints_[i] + "' is not finite");
    }
  }
  limit_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    limit_[i] = model_->effort_limits()[static_cast<std::size_t>(index_[i])];
  }
  command_.assign(n, std::numeric_limits<double>::quiet_NaN());
  position_.assign(n, 0.0);
  velocity_.assign(n, 0.0);
  effort_.assign(n, 0.0);
  x_.assign(2 * static_cast<std::size_t>(nq_), 0.0);
  u_.assign(static_cast<std::size_t>(nq_), 0.0);
  applied_.assign(static_cast<std::size_t>(nq_), 0.0);
  external_.assign(static_cast<std::size_t>(nq_), 0.0);
  drive_.assign(static_cast<std::size_t>(nq_), 0.0);
  external_block_.assign(n, 0.0);
  external_input_.initRT(external_);
  for (std::size_t i = 0; i < n; ++i) {
    x_[static_cast<std::size_t>(index_[i])] = initial[i];
    position_[i] = initial[i];
  }
  plant_.plant.model = &model_->model();
  plant_.plant.g = model_->model().gravity;
  plant_.plant.friction = p.friction ? 1 : 0;
  plant_.plant.smooth = p.smooth;
  plant_.substeps = substeps_;
  plant_.max_step = max_step_;
  plant_.max_substeps = max_substeps_;
  // the model and the initial state work: one evaluation of the dynamics now, not in the loop
  std::vector<double> qdd(static_cast<std::size_t>(nq_));
  const int st =
    rd_plant_accel(&plant_.plant, x_.data(), x_.data() + nq_, u_.data(), qdd.data(), &model_->work());
  if (st != RD_OK) {
    throw std::runtime_error(std::string("the dynamics at the initial state fail: ") + status_name(st));
  }
}

void SimulatedSystem::start_wrench(const PlantParameters & p)
{
  jacobian_.assign(6 * static_cast<std::size_t>(nq_), 0.0);
  wrench_ = WrenchInput{};
  wrench_input_.initRT(wrench_);
  wrench_frame_ = -1;
  const std::vector<std::string> & frames = model_->frame_names();
  if (p.external_wrench_frame.empty()) {
    if (!p.external_wrench_topic.empty()) {
      throw std::runtime_error(
        "simulated_external_wrench_frame: required with simulated_external_wrench_topic, the frame the wrench acts "
        "at; valid: " + join(frames));
    }
    return;
  }
  try {
    wrench_frame_ = model_->frame_index(p.external_wrench_frame);  // throws naming the valid frames
  } catch (const std::runtime_error & e) {
    throw std::runtime_error(std::string("simulated_external_wrench_frame: ") + e.what());
  }
  wrench_frame_name_ = p.external_wrench_frame;
  base_name_ = frames.front();  // the description's links, base first
}

// The interfaces as pointers into this object's arrays: the only form Humble has; Jazzy keeps it
// (deprecated beside its on_export_* interfaces), so the same code serves both.
std::vector<hardware_interface::StateInterface> SimulatedSystem::export_state_interfaces()
{
  std::vector<hardware_interface::StateInterface> out;
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    for (const auto & s : info_.joints[i].state_interfaces) {
      double * value = s.name == hardware_interface::HW_IF_POSITION ? &position_[i]
                       : s.name == hardware_interface::HW_IF_VELOCITY ? &velocity_[i]
                                                                       : &effort_[i];
      out.emplace_back(joints_[i], s.name, value);
    }
  }
  return out;
}

std::vector<hardware_interface::CommandInterface> SimulatedSystem::export_command_interfaces()
{
  std::vector<hardware_interface::CommandInterface> out;
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    out.emplace_back(joints_[i], hardware_interface::HW_IF_EFFORT, &command_[i]);
  }
  return out;
}

SimulatedSystem::CallbackReturn SimulatedSystem::on_activate(const rclcpp_lifecycle::State &)
{
  std::fill(command_.begin(), command_.end(), std::numeric_limits<double>::quiet_NaN());
  std::fill(u_.begin(), u_.end(), std::numeric_limits<double>::quiet_NaN());  // no command: the brakes
  reported_ = false;
  active_ = true;
  return CallbackReturn::SUCCESS;
}

SimulatedSystem::CallbackReturn SimulatedSystem::on_deactivate(const rclcpp_lifecycle::State &)
{
  active_ = false;
  return CallbackReturn::SUCCESS;
}

hardware_interface::return_type SimulatedSystem::read(const rclcpp::Time & time, const rclcpp::Duration & period)
{
  // the engine's period of a simulated arm: no command (inactive, or NaN on every joint) holds the
  // arm with zero velocity, a NaN joint gets zero effort, a late period is cut into steps of at
  // most max_step; a period that is not finite or not > 0 moves nothing (RD_BAD_SIZE)
  rd_plant_report r;
  external_ = *external_input_.readFromRT();  // the same size: a copy, no allocation
  wrench_ = *wrench_input_.readFromRT();      // a fixed-size struct
  if (wrench_.set) {
    // the wrench's joint torque J(q)^T w at the period's start, held over it like the command
    const int wst = add_wrench_torque();
    if (wst != RD_OK) {
      if (!reported_) {
        RCLCPP_ERROR(logger(), "'%s': the simulated wrench's Jacobian failed (%s, status %d) at t = %.6f s; the "
                     "state is kept as it was", info_.name.c_str(), status_name(wst), wst, time.seconds());
        reported_ = true;
      }
      return hardware_interface::return_type::ERROR;
    }
  }
  for (std::size_t k = 0; k < drive_.size(); ++k) {
    drive_[k] = u_[k] + external_[k];  // a NaN command (none) stays NaN: the plant's own rules
  }
  const int st = rd_plant_advance(&plant_, period.seconds(), active_ ? drive_.data() : nullptr, nullptr, x_.data(),
                                  applied_.data(), &r, &model_->work());
  if (r.lagging && !lagging_) {
    // a stall of the loop: simulated time falls behind rather than an unstable step
    RCLCPP_WARN(logger(), "'%s': a period of %.3f s is longer than %d steps of %g s: the simulated "
                "arm falls behind the clock (said once)", info_.name.c_str(), period.seconds(), max_substeps_, max_step_);
    lagging_ = true;
  }
  if (st != RD_OK && st != RD_BAD_SIZE) {
    if (!reported_) {
      RCLCPP_ERROR(logger(), "'%s': the plant's step failed (%s, status %d) at t = %.6f s; the state is "
                   "kept as it was", info_.name.c_str(), status_name(st), st, time.seconds());
      reported_ = true;
    }
    return hardware_interface::return_type::ERROR;
  }
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    const auto k = static_cast<std::size_t>(index_[i]);
    position_[i] = x_[k];
    velocity_[i] = x_[static_cast<std::size_t>(nq_) + k];
    // the motor's effort: the external torque reached the plant only where a command did
    const bool pushed = active_ && !std::isnan(u_[k]) && !std::isnan(applied_[k]);
    effort_[i] = pushed ? applied_[k] - external_[k] : applied_[k];
    external_block_[i] = pushed ? external_[k] : 0.0;
  }
  return hardware_interface::return_type::OK;
}

int SimulatedSystem::add_wrench_torque()
{
  const rd_input in{x_.data(), x_.data() + nq_, nullptr, nullptr, nullptr, 0};
  const rd_task task{wrench_frame_, wrench_.reference, 0, 0.0};
  rd_task_space_out out{};
  out.J = jacobian_.data();  // 6 x nq, rows [vx vy vz wx wy wz] in the wrench's axes
  const int st = rd_task_space(&model_->model(), &in, &task, &out, &model_->work());
  if (st != RD_OK) {
    return st;
  }
  const auto n = static_cast<std::size_t>(nq_);
  for (std::size_t k = 0; k < n; ++k) {
    double tau = 0.0;
    for (std::size_t i = 0; i < 6; ++i) {
      tau += jacobian_[i * n + k] * wrench_.w[i];
    }
    external_[k] += tau;
  }
  return RD_OK;
}

std::string SimulatedSystem::set_external_wrench(const geometry_msgs::msg::WrenchStamped & msg)
{
  if (wrench_frame_ < 0) {
    return "no simulated_external_wrench_frame is set: the wrench has no frame to act at";
  }
  WrenchInput input;
  const std::string & axes = msg.header.frame_id;
  if (axes.empty() || axes == base_name_) {
    input.reference = RD_LOCAL_WORLD_ALIGNED;
  } else if (axes == wrench_frame_name_) {
    input.reference = RD_LOCAL;
  } else {
    return "header.frame_id '" + axes + "': expected '' or '" + base_name_ + "' (the base's axes) or '" +
           wrench_frame_name_ + "' (the axes of the frame the wrench acts at)";
  }
  const auto & f = msg.wrench.force;
  const auto & m = msg.wrench.torque;
  const double w[6] = {f.x, f.y, f.z, m.x, m.y, m.z};
  static const char * const kNames[6] = {"force.x", "force.y", "force.z", "torque.x", "torque.y", "torque.z"};
  for (int i = 0; i < 6; ++i) {
    if (!std::isfinite(w[i])) {
      return std::string("the wrench's ") + kNames[i] + " is not finite";
    }
    input.w[i] = w[i];
    input.set = input.set || w[i] != 0.0;
  }
  wrench_input_.writeFromNonRT(input);
  return "";
}

std::string SimulatedSystem::set_external_torque(const sensor_msgs::msg::JointState & msg)
{
  if (msg.effort.size() != msg.name.size()) {
    return "expected one effort per name, got " + std::to_string(msg.name.size()) + " names and " +
           std::to_string(msg.effort.size()) + " efforts";
  }
  std::vector<double> torque(static_cast<std::size_t>(nq_), 0.0);
  for (std::size_t i = 0; i < msg.name.size(); ++i) {
    const auto at = std::find(joints_.begin(), joints_.end(), msg.name[i]);
    if (at == joints_.end()) {
      return "unknown joint '" + msg.name[i] + "'; valid: " + join(joints_);
    }
    if (!std::isfinite(msg.effort[i])) {
      return "the effort of joint '" + msg.name[i] + "' is not finite";
    }
    torque[static_cast<std::size_t>(index_[static_cast<std::size_t>(at - joints_.begin())])] = msg.effort[i];
  }
  external_input_.writeFromNonRT(torque);
  return "";
}

void SimulatedSystem::start_input(const PlantParameters & p)
{
  if (!rclcpp::ok()) {
    throw std::runtime_error(
      std::string(p.external_torque_topic.empty() ? "simulated_external_wrench_topic" : "simulated_external_torque_topic") +
      ": ROS is not initialized (rclcpp::init) in this process");
  }
  std::string name;
  for (char c : info_.name) {  // a node name: letters, digits and '_'
    name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    name = "system_" + name;
  }
  input_node_ = std::make_shared<rclcpp::Node>(name + "_simulated_input");
  if (!p.external_torque_topic.empty()) {
    const std::string topic = p.external_torque_topic;
    input_subscription_ = input_node_->create_subscription<sensor_msgs::msg::JointState>(
      topic, rclcpp::QoS(10).reliable(), [this, topic](const sensor_msgs::msg::JointState::SharedPtr msg) {
        const std::string reason = set_external_torque(*msg);
        if (!reason.empty()) {
          RCLCPP_WARN(logger(), "'%s': %s refused: %s", info_.name.c_str(), topic.c_str(), reason.c_str());
        }
      });
    RCLCPP_INFO(logger(), "'%s': simulated external joint torques from %s (sensor_msgs/JointState, effort)",
                info_.name.c_str(), input_subscription_->get_topic_name());
  }
  if (!p.external_wrench_topic.empty()) {
    const std::string topic = p.external_wrench_topic;
    wrench_subscription_ = input_node_->create_subscription<geometry_msgs::msg::WrenchStamped>(
      topic, rclcpp::QoS(10).reliable(), [this, topic](const geometry_msgs::msg::WrenchStamped::SharedPtr msg) {
        const std::string reason = set_external_wrench(*msg);
        if (!reason.empty()) {
          RCLCPP_WARN(logger(), "'%s': %s refused: %s", info_.name.c_str(), topic.c_str(), reason.c_str());
        }
      });
    RCLCPP_INFO(logger(), "'%s': a simulated external wrench at '%s' from %s (geometry_msgs/WrenchStamped)",
                info_.name.c_str(), wrench_frame_name_.c_str(), wrench_subscription_->get_topic_name());
  }
  input_executor_ = std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  input_executor_->add_node(input_node_);
  input_thread_ = std::thread([executor = input_executor_] { executor->spin(); });
}

SimulatedSystem::~SimulatedSystem()
{
  if (input_executor_) {
    input_executor_->cancel();
  }
  if (input_thread_.joinable()) {
    input_thread_.join();
  }
}

hardware_interface::return_type SimulatedSystem::write(const rclcpp::Time &, const rclcpp::Duration &)
{
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    const double c = command_[i];  // NaN: no command on this joint, taken by the plant's period
    u_[static_cast<std::size_t>(index_[i])] = std::isnan(c) ? c : std::min(std::max(c, -limit_[i]), limit_[i]);
  }
  return hardware_interface::return_type::OK;
}

}  // namespace robot_dynamics_control

#include "pluginlib/class_list_macros.hpp"

PLUGINLIB_EXPORT_CLASS(robot_dynamics_control::SimulatedSystem, hardware_interface::SystemInterface)
