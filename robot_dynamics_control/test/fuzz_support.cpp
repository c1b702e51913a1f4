// The definitions of fuzz_support.hpp.
#include "fuzz_support.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace rd_fuzz
{

namespace
{

uint64_t splitmix64(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string attribute(const std::string & tag, const std::string & key)
{
  const std::string open = " " + key + "=\"";
  const size_t at = tag.find(open);
  if (at == std::string::npos) {
    return "";
  }
  const size_t begin = at + open.size();
  return tag.substr(begin, tag.find('"', begin) - begin);
}

double number_or(const std::string & text, double otherwise)
{
  return text.empty() ? otherwise : std::strtod(text.c_str(), nullptr);
}

std::vector<std::string> words_of(const std::string & text)
{
  std::set<std::string> words;
  std::string w;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      w += c;
    } else {
      if (w.size() >= 2) {
        words.insert(w);
      }
      w.clear();
    }
  }
  return {words.begin(), words.end()};
}

}  // namespace

// -- settings --------------------------------------------------------------------------------------

Settings settings()
{
  Settings s;
  if (const char * seed = std::getenv("RD_FUZZ_SEED"); seed != nullptr && *seed != '\0') {
    s.seed = std::strtoull(seed, nullptr, 0);
  }
  if (const char * budget = std::getenv("RD_FUZZ_BUDGET"); budget != nullptr && *budget != '\0') {
    s.budget = std::max(1L, std::strtol(budget, nullptr, 0));
  }
  return s;
}

uint64_t case_seed(uint64_t seed, const std::string & name)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h = (h ^ c) * 0x100000001b3ULL;
  }
  return splitmix64(seed ^ h);
}

const std::vector<double> kHostile = {
  kNaN, -kNaN, kInf, -kInf, 1e300, -1e300, 1e308, -1e308, 1e18, -1e18, 5e-324, -5e-324, 1e-310, -0.0, -1.0, 0.0};

// -- the robots ------------------------------------------------------------------------------------

Robot load_robot(const std::string & name, const std::string & drivetrain)
{
  Robot r;
  r.name = name;
  r.urdf = read_text(robot_file("urdf/" + name + ".urdf"));
  r.drivetrain = robot_file("config/" + drivetrain);
  for (size_t at = r.urdf.find("<joint"); at != std::string::npos; at = r.urdf.find("<joint", at + 1)) {
    if (!std::isspace(static_cast<unsigned char>(r.urdf[at + 6]))) {
      continue;  // <joint_...>
    }
    const std::string tag = r.urdf.substr(at, r.urdf.find('>', at) - at);
    const std::string type = attribute(tag, "type");
    if (type != "revolute" && type != "prismatic" && type != "continuous") {
      continue;
    }
    const size_t end = tag.back() == '/' ? at + tag.size() : r.urdf.find("</joint>", at);
    const std::string body = r.urdf.substr(at, end - at);
    const size_t limit_at = body.find("<limit");
    const std::string limit =
      limit_at == std::string::npos ? "" : body.substr(limit_at, body.find('>', limit_at) - limit_at);
    const bool bounded = type != "continuous" && !limit.empty();
    r.joints.push_back(attribute(tag, "name"));
    r.lower.push_back(bounded ? number_or(attribute(limit, "lower"), -M_PI) : -M_PI);
    r.upper.push_back(bounded ? number_or(attribute(limit, "upper"), M_PI) : M_PI);
    r.velocity.push_back(number_or(attribute(limit, "velocity"), 5.0));
    r.effort.push_back(number_or(attribute(limit, "effort"), kInf));
  }
  const auto model = robot_dynamics_control::EngineModel::from_text(
    robot_dynamics_control::test::engine_model_text(r.urdf, r.drivetrain, ""));
  r.base = model->frame_names().front();
  r.tip = model->frame_names().back();
  return r;
}

geometry_msgs::msg::PoseStamped random_target(Random & rng, const Robot & robot, double hostile)
{
  geometry_msgs::msg::PoseStamped msg;
  msg.header.frame_id = rng.chance(0.5) ? "" : robot.base;
  auto & p = msg.pose.position;
  p.x = rng.uniform(-1.5, 1.5), p.y = rng.uniform(-1.5, 1.5), p.z = rng.uniform(-0.5, 1.5);
  double q[4], n = 0.0;
  for (double & x : q) {
    x = rng.uniform(-1.0, 1.0);
    n += x * x;
  }
  n = std::sqrt(n);
  auto & o = msg.pose.orientation;
  o.x = q[0] / n, o.y = q[1] / n, o.z = q[2] / n, o.w = q[3] / n;
  if (rng.chance(hostile)) {
    switch (rng.below(4)) {
      case 0: p.x = rng.pick(kHostile); break;
      case 1: o.w = rng.pick(kHostile); break;
      case 2: o.x = o.y = o.z = o.w = 0.0; break;  // the default-constructed message's mistake
      default: msg.header.frame_id = rng.chance(0.5) ? robot.tip : "unknown_frame"; break;
    }
  }
  return msg;
}

double random_task_reference(Random & rng, const std::string & kind, double hostile)
{
  if (rng.chance(0.3)) {
    return kNaN;
  }
  if (rng.chance(hostile)) {
    return rng.pick(kHostile);
  }
  if (kind.rfind("position.", 0) == 0) {
    return rng.uniform(-1.5, 1.5);
  }
  return kind.rfind("orientation.", 0) == 0 ? rng.uniform(-1.0, 1.0) : rng.uniform(-2.0, 2.0);
}

std::string joints_line(const Robot & robot)
{
  std::string line = "    joints: [";
  for (size_t j = 0; j < robot.n(); ++j) {
    line += (j ? ", " : "") + robot.joints[j];
  }
  return line + "]\n";
}

std::vector<double> middle(const Robot & robot)
{
  std::vector<double> q;
  for (size_t j = 0; j < robot.n(); ++j) {
    q.push_back(0.5 * (robot.lower[j] + robot.upper[j]));
  }
  return q;
}

// -- text of values --------------------------------------------------------------------------------

std::string format(double x)
{
  char b[32];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

std::string format(const std::vector<double> & v)
{
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    s += (k ? ", " : "") + format(v[k]);
  }
  return s + "]";
}

std::string format(const std::vector<std::string> & v)
{
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) {
    s += (k ? ", '" : "'") + v[k] + "'";
  }
  return s + "]";
}

std::string format(const rclcpp::ParameterValue & value)
{
  switch (value.get_type()) {
    case rclcpp::ParameterType::PARAMETER_DOUBLE: return format(value.get<double>());
    case rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY: return format(value.get<std::vector<double>>());
    case rclcpp::ParameterType::PARAMETER_STRING: return "'" + value.get<std::string>().substr(0, 40) + "'";
    case rclcpp::ParameterType::PARAMETER_STRING_ARRAY: return format(value.get<std::vector<std::string>>());
    default: return rclcpp::to_string(value);
  }
}

std::string format(const trajectory_msgs::msg::JointTrajectory & msg)
{
  std::string s = "stamp " + std::to_string(msg.header.stamp.sec) + " s " + std::to_string(msg.header.stamp.nanosec) +
                  " ns, joints " + format(msg.joint_names) + ", " + std::to_string(msg.points.size()) + " points:";
  for (const auto & p : msg.points) {
    s += " {t " + std::to_string(p.time_from_start.sec) + " s " + std::to_string(p.time_from_start.nanosec) +
         " ns, q " + format(p.positions);
    if (!p.velocities.empty()) {
      s += ", qd " + format(p.velocities);
    }
    if (!p.accelerations.empty()) {
      s += ", qdd " + format(p.accelerations);
    }
    s += "}";
  }
  return s;
}

std::string yaml(const rclcpp::ParameterValue & value)
{
  const auto number = [](double x) {
    if (std::isnan(x)) {
      return std::string(".nan");
    }
    if (std::isinf(x)) {
      return std::string(x > 0 ? ".inf" : "-.inf");
    }
    std::string s = format(x);
    return s.find_first_of(".e") == std::string::npos ? s + ".0" : s;
  };
  const auto text = [](const std::string & s) {
    std::string q = "\"";
    for (char c : s) {
      q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    }
    return q + "\"";
  };
  const auto list = [](const auto & items, const auto & one) {
    if (items.empty()) {
      return std::string();
    }
    std::string s = "[";
    for (size_t k = 0; k < items.size(); ++k) {
      s += (k ? ", " : "") + one(items[k]);
    }
    return s + "]";
  };
  switch (value.get_type()) {
    case rclcpp::ParameterType::PARAMETER_BOOL: return value.get<bool>() ? "true" : "false";
    case rclcpp::ParameterType::PARAMETER_INTEGER: return std::to_string(value.get<int64_t>());
    case rclcpp::ParameterType::PARAMETER_DOUBLE: return number(value.get<double>());
    case rclcpp::ParameterType::PARAMETER_STRING: return text(value.get<std::string>());
    case rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY: return list(value.get<std::vector<double>>(), number);
    case rclcpp::ParameterType::PARAMETER_STRING_ARRAY: return list(value.get<std::vector<std::string>>(), text);
    case rclcpp::ParameterType::PARAMETER_INTEGER_ARRAY:
      return list(value.get<std::vector<int64_t>>(), [](int64_t i) { return std::to_string(i); });
    case rclcpp::ParameterType::PARAMETER_BOOL_ARRAY:
      return list(value.get<std::vector<bool>>(), [](bool b) { return std::string(b ? "true" : "false"); });
    default: return "";
  }
}

bool has_nonfinite(const rclcpp::ParameterValue & value)
{
  if (value.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE) {
    return !std::isfinite(value.get<double>());
  }
  if (value.get_type() == rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY) {
    for (double x : value.get<std::vector<double>>()) {
      if (!std::isfinite(x)) {
        return true;
      }
    }
  }
  return false;
}

// -- the journal and the crash handler -------------------------------------------------------------

Journal journal;

extern "C" void on_crash(int sig)
{
  journal.dump(STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// -- the controllers' parameters, as the node describes them --------------------------------------

std::vector<ParamInfo> discover(const rclcpp_lifecycle::LifecycleNode & node)
{
  std::vector<std::string> names;
  for (const auto & name : node.list_parameters({}, 0).names) {
    if (name != "use_sim_time" && name.rfind("qos_overrides.", 0) != 0) {
      names.push_back(name);
    }
  }
  std::vector<ParamInfo> params;
  const auto descriptors = node.describe_parameters(names);
  for (size_t k = 0; k < names.size(); ++k) {
    const auto & d = descriptors[k];
    const uint8_t type = node.get_parameter(names[k]).get_type();
    params.push_back({names[k], type, d.read_only, words_of(d.description + " " + d.additional_constraints)});
  }
  return params;
}

}  // namespace rd_fuzz
