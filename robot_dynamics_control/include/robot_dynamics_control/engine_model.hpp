// The engine's packed model for C++: built once, at configuration time, from the text form that
// robot_dynamics' one loader prints (`robot-dynamics engine-model`), with one state's workspace.
// The text comes as a parameter (robot_model): the launch runs the loader, never the plugin.
#ifndef ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_
#define ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_

#include <memory>
#include <string>
#include <vector>

extern "C" {
#include <robot_dynamics_engine/engine.h>
}

namespace robot_dynamics_control
{

/// What the loader checked when it made the text: `robot-dynamics engine-model --strict` refuses a
/// massless moving link, an inertia that is not physically realizable and a joint without an effort
/// limit, each named, unless the robot's drive-train YAML accepts it, and records its options in the
/// text's line `# checks: strict [allow-no-effort-limit]` (kModelChecksLine); a text without that
/// line was not checked.
struct ModelChecks
{
  /// Made with --strict: the loader refused the issues the description does not accept.
  bool strict = false;
  /// Made with --allow-no-effort-limit: a joint without an effort limit was no issue (the caller
  /// gives its own effort limits).
  bool effort_limits_given = false;
};

/// The start of the text's line recording the checks ("# checks: strict allow-no-effort-limit"): a
/// comment to the engine's parser (rd_model_parse skips lines starting with '#').
inline constexpr const char * kModelChecksLine = "# checks:";

/// What a configuration error says about the model's parameter `parameter` (robot_model): the
/// command that prints its text, and who sets it.
std::string model_parameter_help(const std::string & parameter);

class EngineModel
{
public:
  /// The model of its text form (rd_model_parse), its checks read from the `# checks:` line.
  /// Configuration time only (it allocates). Throws std::runtime_error with the parser's reason.
  static std::shared_ptr<EngineModel> from_text(const std::string & text);

  /// The model of the parameter `parameter` holding the text: from_text, then the loader's checks
  /// required unless `allow_nonphysical_model`: made with --strict, and, where `own_effort_limits` is
  /// false (the caller gives none), not with --allow-no-effort-limit. Throws std::runtime_error
  /// naming the parameter and the command that makes the text (empty text, bad text, checks missing).
  static std::shared_ptr<EngineModel> from_parameter(
    const std::string & parameter, const std::string & text, bool allow_nonphysical_model, bool own_effort_limits);

  ~EngineModel();
  EngineModel(const EngineModel &) = delete;
  EngineModel & operator=(const EngineModel &) = delete;

  /// The packed model (read-only).
  const rd_model & model() const { return model_; }
  /// One state's workspace (rd_work_bind on memory allocated with the model's block).
  rd_work & work() { return work_; }
  /// Number of independent joints.
  int nq() const { return model_.nq; }
  /// Joint names in model order, (nq).
  const std::vector<std::string> & joint_names() const { return joint_names_; }
  /// Effort limits in model order [N m or N], (nq); +inf where the description gives none.
  const std::vector<double> & effort_limits() const { return effort_limits_; }
  /// Position limits [rad or m] (-inf, +inf where none) and velocity limits [rad/s or m/s] (+inf
  /// where none) in model order, (nq) each.
  const std::vector<double> & position_lower() const { return position_lower_; }
  const std::vector<double> & position_upper() const { return position_upper_; }
  const std::vector<double> & velocity_limits() const { return velocity_limits_; }
  /// Model indices of `names`; throws std::runtime_error naming the unknown joint and the valid ones.
  std::vector<int> indices_of(const std::vector<std::string> & names) const;
  /// Frame names in the model's frame order (the description's links, base first), (nf); empty when
  /// the text has no frame_names line.
  const std::vector<std::string> & frame_names() const { return frame_names_; }
  /// The frame index of `name` (0 <= k < nf, rd_task's frame); throws std::runtime_error naming the
  /// unknown frame and the valid ones (or that the text names no frames).
  int frame_index(const std::string & name) const;
  /// The robot name of the text form's first line.
  const std::string & robot_name() const { return robot_name_; }
  /// What the loader checked when it made the text (its `# checks:` line; none: all false).
  const ModelChecks & checks() const { return checks_; }

private:
  EngineModel() = default;

  rd_model model_{};
  rd_work work_{};
  std::vector<std::string> joint_names_, frame_names_;
  std::vector<double> effort_limits_, position_lower_, position_upper_, velocity_limits_;
  std::string robot_name_;
  ModelChecks checks_;
};

/// "['a', 'b']": names as a list for error messages.
std::string format_names(const std::vector<std::string> & names);

}  // namespace robot_dynamics_control

#endif  // ROBOT_DYNAMICS_CONTROL__ENGINE_MODEL_HPP_
