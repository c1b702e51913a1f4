#include "robot_dynamics_control/controller_parameters.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace robot_dynamics_control
{

namespace
{
/// The largest magnitude a number parameter may have: gains, limits and rates of real arms lie far
/// below it, and a law with such a gain cannot overflow on a state and reference of an arm.
constexpr double kLargest = 1e12;
bool sane(double x) { return std::isfinite(x) && std::abs(x) <= kLargest; }
}  // namespace

ParameterChecks::ParameterChecks(
  std::vector<std::pair<std::string, bool>> per_joint, std::vector<std::string> read_only,
  std::vector<std::string> positive, std::vector<std::pair<std::string, size_t>> sized)
: per_joint_(std::move(per_joint)), read_only_(std::move(read_only)), positive_(std::move(positive)),
  sized_(std::move(sized))
{
}

std::string ParameterChecks::check(const rclcpp::Parameter & parameter, size_t n, bool configured) const
{
  const std::string & name = parameter.get_name();
  if (configured && std::find(read_only_.begin(), read_only_.end(), name) != read_only_.end()) {
    return "parameter '" + name + "' is read-only while the controller is configured (clean it up to change it)";
  }
  const auto type = parameter.get_type();
  for (const auto & [known, known_type] : types_) {
    if (known == name && known_type != type) {
      return "parameter '" + name + "': expected a value of type " + rclcpp::to_string(known_type) + ", got " +
             rclcpp::to_string(type);
    }
  }
  if (type == rclcpp::ParameterType::PARAMETER_DOUBLE) {
    if (!sane(parameter.as_double())) {
      return "parameter '" + name + "': expected a finite number of magnitude at most 1e12, got " +
             parameter.value_to_string();
    }
  } else if (type == rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY) {
    const auto & values = parameter.as_double_array();
    for (size_t i = 0; i < values.size(); ++i) {
      if (!sane(values[i])) {
        return "parameter '" + name + "': expected finite numbers of magnitude at most 1e12, got " +
               parameter.value_to_string();
      }
    }
    if (std::find(positive_.begin(), positive_.end(), name) != positive_.end()) {
      for (double v : values) {
        if (!(v > 0.0)) {
          return "parameter '" + name + "': expected values > 0, got " + parameter.value_to_string();
        }
      }
    }
    for (const auto & [sized_name, count] : sized_) {
      if (sized_name == name && !values.empty() && values.size() != count) {
        return "parameter '" + name + "': expected " + std::to_string(count) + " values or none, got " +
               std::to_string(values.size());
      }
    }
    for (const auto & [joint_name, may_be_empty] : per_joint_) {
      if (joint_name != name) {
        continue;
      }
      const bool fits = values.size() == 1 || (n > 0 && values.size() == n) || (n == 0 && !values.empty()) ||
                        (may_be_empty && values.empty());
      if (!fits) {
        return "parameter '" + name + "': expected one value (every joint)" +
               (n > 0 ? " or " + std::to_string(n) + " (one per joint)" : std::string(" or one per joint")) +
               (may_be_empty ? " or none" : "") + ", got " + std::to_string(values.size());
      }
    }
  }
  return "";
}

rcl_interfaces::msg::SetParametersResult ParameterChecks::on_set(
  const std::vector<rclcpp::Parameter> & parameters, size_t n, bool configured) const
{
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = true;
  for (const auto & p : parameters) {
    const std::string reason = check(p, n, configured);
    if (!reason.empty()) {
      result.successful = false;
      result.reason = reason;
      break;
    }
  }
  return result;
}

void ParameterChecks::record_types(rclcpp_lifecycle::LifecycleNode & node)
{
  types_.clear();
  const auto names = node.list_parameters({}, 0).names;
  for (const auto & p : node.get_parameters(names)) {
    types_.emplace_back(p.get_name(), p.get_type());
  }
}

void ParameterChecks::check_node(rclcpp_lifecycle::LifecycleNode & node, size_t n) const
{
  const auto names = node.list_parameters({}, 0).names;
  for (const auto & p : node.get_parameters(names)) {
    const std::string reason = check(p, n, false);
    if (!reason.empty()) {
      throw std::runtime_error(reason);
    }
  }
}

}  // namespace robot_dynamics_control
